// The disk tier refuses a spill file that is not what it wrote: overwritten, cut short, or another
// block (of this run or another) swapped in, through both ways of reading it back (block() and
// read_layer()); a full disk is an EnvironmentError naming the file. Never a block read from it.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "core/io/checksum.h"
#include "core/io/environment_error.h"
#include "core/memory/memory_bank.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;
using test::random_block;
using test::temp_dir;

constexpr int64_t kLayers = 2, kTokens = 4, kKvHeads = 2, kDim = 8;

std::string spill_file(const std::string& dir, int64_t id) { return dir + "/block_" + std::to_string(id) + ".kv"; }

// The message of the EnvironmentError `read` throws ("" when it throws none).
std::string environment_error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const EnvironmentError& e) {
    return e.what();
  }
  return "";
}

// Both ways of reading block `id` back must throw an EnvironmentError naming its file.
void check_refused(const MemoryBank& bank, const std::string& file, int64_t id, const std::string& why) {
  INFO(why);
  const auto k = at::empty({kTokens, kKvHeads, kDim}), v = at::empty({kTokens, kKvHeads, kDim});
  for (const std::string& what : {environment_error_of([&] { bank.block(id); }),
                                  environment_error_of([&] { bank.read_layer(id, kLayers - 1, k, v); })}) {
    CHECK_THAT(what, Catch::Matchers::Contains(file) && Catch::Matchers::Contains("changed since it was written"));
  }
}

// A bank of three spilled blocks (budget 0) with its files in `dir`, `change` applied to block 1's file.
void check_change(const std::string& name, const std::function<void(const std::string& dir)>& change) {
  at::manual_seed(1);
  const std::string dir = temp_dir(name);
  MemoryBank bank({kLayers, at::kCPU, 0, dir});
  for (int i = 0; i < 3; ++i) bank.add(random_block(kLayers, kTokens, kKvHeads, kDim, i * kTokens));
  CHECK(bank.block(1).keys[0].defined());  // read fine while untouched
  change(dir);
  check_refused(bank, spill_file(dir, 1), 1, name);
  CHECK_NOTHROW(bank.block(0));  // the others still read
  CHECK_NOTHROW(bank.block(2));
}

}  // namespace

TEST_CASE("checksum64: pieces of any size give the whole's checksum; one bit changes it", "[memory][spill]") {
  std::string bytes(1000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  const uint64_t whole = checksum64(bytes.data(), bytes.size());
  for (const size_t piece : {1, 5, 31, 32, 33, 100, 999}) {
    Checksum64 c;
    for (size_t at = 0; at < bytes.size(); at += piece) c.update(bytes.data() + at, std::min(piece, bytes.size() - at));
    CHECK(c.digest() == whole);
  }
  for (const size_t at : {0, 31, 32, 500, 999}) {
    std::string flipped = bytes;
    flipped[at] ^= 1;
    CHECK(checksum64(flipped.data(), flipped.size()) != whole);
  }
  CHECK(checksum64(bytes.data(), 999) != whole);
  CHECK(checksum64("", 0) != checksum64("\0", 1));
}

TEST_CASE("a spill file overwritten in place is refused, naming it", "[memory][spill]") {
  check_change("overwritten", [](const std::string& dir) {
    std::fstream f(spill_file(dir, 1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(spill_file(dir, 1)) - 3));
    f.put('\x5a');
  });
}

TEST_CASE("a truncated spill file is refused for its size, not a stale errno", "[memory][spill]") {
  check_change("truncated", [](const std::string& dir) { fs::resize_file(spill_file(dir, 1), 10); });
  const std::string dir = temp_dir("truncated_message");
  MemoryBank bank({kLayers, at::kCPU, 0, dir});
  bank.add(random_block(kLayers, kTokens, kKvHeads, kDim, 0));
  fs::resize_file(spill_file(dir, 0), 10);
  errno = ENOENT;  // what the old message reported, left over from an unrelated call
  try {
    bank.block(0);
    FAIL("read from a truncated file");
  } catch (const EnvironmentError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("10 bytes") && !Catch::Matchers::Contains("No such file"));
  }
}

TEST_CASE("another block of the same size swapped in (this run's or another's) is refused", "[memory][spill]") {
  check_change("swapped", [](const std::string& dir) { fs::copy_file(spill_file(dir, 0), spill_file(dir, 1), fs::copy_options::overwrite_existing); });
  check_change("foreign", [](const std::string& dir) {
    at::manual_seed(99);  // another run: same shapes, other values
    const std::string other = temp_dir("foreign_other");
    MemoryBank theirs({kLayers, at::kCPU, 0, other});
    for (int i = 0; i < 2; ++i) theirs.add(random_block(kLayers, kTokens, kKvHeads, kDim, i * kTokens));
    REQUIRE(fs::file_size(spill_file(other, 1)) == fs::file_size(spill_file(dir, 1)));
    fs::copy_file(spill_file(other, 1), spill_file(dir, 1), fs::copy_options::overwrite_existing);
  });
}

TEST_CASE("a full spill disk is an EnvironmentError naming the file", "[memory][spill]") {
  const std::string dir = temp_dir("full");
  fs::create_directories(dir);
  fs::create_symlink("/dev/full", spill_file(dir, 0));  // writes to it fail with ENOSPC
  MemoryBank bank({kLayers, at::kCPU, 0, dir});
  const std::string what = environment_error_of([&] { bank.add(random_block(kLayers, kTokens, kKvHeads, kDim, 0)); });
  CHECK_THAT(what, Catch::Matchers::Contains(spill_file(dir, 0)) && Catch::Matchers::Contains("No space left on device"));
}

}  // namespace svqa
