#pragma once
// A fast 64-bit checksum of bytes (xxHash64's round and mix, not its exact output): spill blocks
// are checked with it when read back, and a run folder records its models' files by it. It finds
// corruption and substitution, not a deliberate forgery.

#include <cstddef>
#include <cstdint>
#include <string>

namespace svqa {

class Checksum64 {
 public:
  // Feeds `n` more bytes; pieces of any size give the same result as the whole at once.
  void update(const void* data, size_t n);
  uint64_t digest() const;

 private:
  void round(const unsigned char* block);  // 32 bytes
  uint64_t lanes_[4] = {0x60ea27eeadc0b5d6ull, 0xc2b2ae3d27d4eb4full, 0, 0x61c8864e7a143579ull};
  unsigned char pending_[32] = {};
  size_t pending_size_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum64(const void* data, size_t n);
// The checksum of a whole file, read in 1 MiB pieces; throws std::runtime_error naming the file.
uint64_t file_checksum64(const std::string& path);
// 16 lower-case hex digits.
std::string hex64(uint64_t value);

}  // namespace svqa
