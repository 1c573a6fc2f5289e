#include "core/io/checksum.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace svqa {
namespace {

constexpr uint64_t kP1 = 0x9e3779b185ebca87ull, kP2 = 0xc2b2ae3d27d4eb4full, kP3 = 0x165667b19e3779f9ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t lane_round(uint64_t lane, uint64_t word) { return rotl(lane + word * kP2, 31) * kP1; }

}  // namespace

void Checksum64::round(const unsigned char* block) {
  for (int k = 0; k < 4; ++k) lanes_[k] = lane_round(lanes_[k], load64(block + 8 * k));
}

void Checksum64::update(const void* data, size_t n) {
  auto p = static_cast<const unsigned char*>(data);
  total_ += n;
  if (pending_size_) {  // complete the partial block of an earlier piece first
    const size_t take = std::min(n, sizeof pending_ - pending_size_);
    std::memcpy(pending_ + pending_size_, p, take);
    pending_size_ += take, p += take, n -= take;
    if (pending_size_ < sizeof pending_) return;
    round(pending_);
    pending_size_ = 0;
  }
  for (; n >= 32; p += 32, n -= 32) round(p);
  std::memcpy(pending_, p, n);
  pending_size_ = n;
}

uint64_t Checksum64::digest() const {
  uint64_t h = rotl(lanes_[0], 1) + rotl(lanes_[1], 7) + rotl(lanes_[2], 12) + rotl(lanes_[3], 18);
  for (const uint64_t lane : lanes_) h = (h ^ lane_round(0, lane)) * kP1 + kP3;
  h += total_;
  size_t i = 0;
  for (; i + 8 <= pending_size_; i += 8) h = rotl(h ^ lane_round(0, load64(pending_ + i)), 27) * kP1 + kP3;
  for (; i < pending_size_; ++i) h = rotl(h ^ (pending_[i] * kP3), 11) * kP1;
  h ^= h >> 33, h *= kP2, h ^= h >> 29, h *= kP3, h ^= h >> 32;
  return h;
}

uint64_t checksum64(const void* data, size_t n) {
  Checksum64 c;
  c.update(data, n);
  return c.digest();
}

uint64_t file_checksum64(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::vector<char> buffer(size_t{1} << 20);
  Checksum64 c;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    c.update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error(path + ": read failed");
  return c.digest();
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace svqa
