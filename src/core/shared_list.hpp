// An append-only list that its copies share: a copy takes the buffer and
// the length, not the elements, and each copy sees the first size() of
// them. Appending writes in place when the buffer has room and no other
// copy has appended at that place yet (the copy that claims the next slot
// owns it: a reader of an older copy never reads past its own length, so it
// never reads what a newer one writes); otherwise the list moves to a
// buffer of its own, twice the length. A list updated from its copy again
// and again (a snapshot made from the previous one) thus copies its
// elements once per doubling instead of at every update.
//
// Thread-safety: copies may append concurrently; a single list is not
// written by two threads at once (as any container). The elements are plain
// data (trivially copyable): a buffer's slots are left unwritten until
// claimed, so a fresh buffer costs no pass over its room.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace engram {

template <typename T>
class SharedList {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return buf_ ? buf_->capacity : 0; }
  const T* data() const { return buf_ ? buf_->data : nullptr; }
  const T& operator[](std::size_t i) const { return buf_->data[i]; }
  const T& back() const { return buf_->data[size_ - 1]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  // Room for `n` elements in all: moves the list to a buffer of its own of
  // that size when its buffer is smaller.
  void reserve(std::size_t n) {
    if (n > capacity()) Move(n);
  }
  void push_back(const T& v) {
    if (!buf_ || !buf_->Claim(size_)) {
      Move(std::max<std::size_t>(2, 2 * size_));
      (void)buf_->Claim(size_);  // a fresh buffer has room past size_, and no other owner
    }
    std::construct_at(buf_->data + size_, v);
    ++size_;
  }
  void clear() {
    buf_.reset();
    size_ = 0;
  }

 private:
  struct Buffer {
    Buffer(std::size_t n, std::size_t claimed_n)
        : data(std::allocator<T>().allocate(n)), capacity(n), claimed(claimed_n) {}
    ~Buffer() { std::allocator<T>().deallocate(data, capacity); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    // Claims slot `at` (the claimer's length): true when no copy has claimed
    // it and the buffer has room.
    bool Claim(std::size_t at) {
      if (at >= capacity) return false;
      // (Relaxed: the slot is written after the claim and read only through
      // a list published after it; the count only decides who may write.)
      std::size_t expected = at;
      return claimed.compare_exchange_strong(expected, at + 1, std::memory_order_relaxed);
    }
    T* data;  // the first `claimed` slots written
    std::size_t capacity;
    std::atomic<std::size_t> claimed;  // slots claimed by any copy
  };
  void Move(std::size_t capacity) {
    auto fresh = std::make_shared<Buffer>(capacity, size_);
    if (size_ > 0) std::uninitialized_copy(buf_->data, buf_->data + size_, fresh->data);
    buf_ = std::move(fresh);
  }

  std::shared_ptr<Buffer> buf_;
  std::size_t size_ = 0;
};

}  // namespace engram
