// Embedder: text -> L2-normalised vector. The seam where the built-in hashed
// embedder and OpenAI-compatible embedding endpoints plug in.
#pragma once

#include <string>
#include <vector>

#include "engram/result.hpp"

namespace engram {

using Vector = std::vector<float>;

class Embedder {
 public:
  virtual ~Embedder() = default;
  // Stable identity recorded in the store, e.g. "builtin-hash-v1".
  virtual std::string Name() const = 0;
  virtual int Dimension() const = 0;
  // True for the offline built-in embedder (its work is labelled degraded).
  virtual bool IsBuiltin() const = 0;
  // One L2-normalised vector per text, in order (an empty text gives a zero
  // vector). Thread-safe.
  virtual Result<std::vector<Vector>> Embed(const std::vector<std::string>& texts) = 0;
};

// Dot product of two vectors of equal size (cosine for normalised vectors).
float Dot(const Vector& a, const Vector& b);
float Dot(const float* a, const float* b, int dim);
// Normalises in place; leaves a zero vector as is.
void Normalize(Vector& v);

}  // namespace engram
