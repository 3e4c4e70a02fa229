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
// A list whose buffer was never shared appends without claiming (the claim
// is an atomic exchange on the buffer, which a first build of an index
// paid on every posting: most of the cost of adding a document); the first
// copy of it records the length as claimed.
//
// Thread-safety: copies may append concurrently, and a list may be copied
// by several threads at once; a single list is not written by two threads
// at once, nor copied while it is written (as any container). The elements
// are plain data (trivially copyable): a buffer's slots are left unwritten
// until claimed, so a fresh buffer costs no pass over its room.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace engram {

template <typename T>
class SharedList {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  SharedList() = default;
  SharedList(const SharedList& o) : buf_(o.Share()), data_(o.data_), size_(o.size_), capacity_(o.capacity_) {}
  SharedList& operator=(const SharedList& o) {
    if (this != &o) {
      buf_ = o.Share();
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      sole_.store(false, std::memory_order_relaxed);
    }
    return *this;
  }
  SharedList(SharedList&& o) noexcept
      : buf_(std::move(o.buf_)), data_(o.data_), size_(o.size_), capacity_(o.capacity_),
        sole_(o.sole_.load(std::memory_order_relaxed)) {
    o.Reset();
  }
  SharedList& operator=(SharedList&& o) noexcept {
    if (this != &o) {
      buf_ = std::move(o.buf_);
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      sole_.store(o.sole_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      o.Reset();
    }
    return *this;
  }
  ~SharedList() = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return capacity_; }
  const T* data() const { return data_; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  // Room for `n` elements in all: moves the list to a buffer of its own of
  // that size when its buffer is smaller.
  void reserve(std::size_t n) {
    if (n > capacity_) Move(n);
  }
  void push_back(const T& v) {
    const bool mine = size_ < capacity_ && (sole_.load(std::memory_order_relaxed) || buf_->Claim(size_));
    if (!mine) Move(std::max<std::size_t>(2, 2 * size_));  // sole owner of a buffer with room
    std::construct_at(data_ + size_, v);
    ++size_;
  }
  void clear() {
    Reset();
    buf_.reset();
  }

 private:
  struct Buffer {
    explicit Buffer(std::size_t n) : data(std::allocator<T>().allocate(n)), capacity(n) {}
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
    T* data;
    std::size_t capacity;
    // Slots claimed by any copy; while one list alone holds the buffer, its
    // length is what it claimed, recorded here by the first copy (Share):
    // until then no claim succeeds.
    std::atomic<std::size_t> claimed{SIZE_MAX};
  };

  // The buffer for a copy: from now on it is shared, and its claims count.
  std::shared_ptr<Buffer> Share() const {
    // (One of the threads copying at once records the length; until it
    // has, the others' copies can claim nothing and move on appending.)
    bool sole = true;
    if (sole_.compare_exchange_strong(sole, false, std::memory_order_relaxed)) {
      buf_->claimed.store(size_, std::memory_order_relaxed);
    }
    return buf_;
  }
  void Move(std::size_t capacity) {
    auto fresh = std::make_shared<Buffer>(capacity);
    if (size_ > 0) std::uninitialized_copy(data_, data_ + size_, fresh->data);
    buf_ = std::move(fresh);
    data_ = buf_->data;
    capacity_ = capacity;
    sole_.store(true, std::memory_order_relaxed);
  }
  void Reset() {
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
    sole_.store(false, std::memory_order_relaxed);
  }

  std::shared_ptr<Buffer> buf_;
  T* data_ = nullptr;  // buf_->data (readers reach the elements in one step)
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // buf_->capacity
  // No other list holds buf_: appending needs no claim. Cleared by a copy
  // (from a const list, hence mutable; atomic, as threads may copy a list
  // at once).
  mutable std::atomic<bool> sole_{false};
};

}  // namespace engram
