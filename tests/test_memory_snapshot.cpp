// A memory snapshot's blocks (engine/snapshot/snapshot_log.h) added back to a bank mapped from
// the snapshot's file: bit for bit, accounted as the bank that made them, and a changed byte
// refused with MappedFileChanged naming the file; the live log (live_log.h) read while written:
// only whole records, never a torn one.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "core/io/checksum.h"
#include "core/memory/memory_bank.h"
#include "engine/snapshot/live_log.h"
#include "engine/snapshot/snapshot_file.h"
#include "engine/snapshot/snapshot_log.h"
#include "tests/strategy_fixtures.h"

namespace svqa {

TEST_CASE("snapshot blocks come back mapped, bit for bit, accounted as the bank that made them", "[snapshot]") {
  at::manual_seed(0);
  const int64_t layers = 3, n = 5, kv = 2, d = 8, block_bytes = layers * 2 * n * kv * d * 2;
  const std::string dir = test::temp_dir("snapshot");
  MemoryBank made({layers, at::kCPU, 3 * block_bytes, dir + "/spill"});
  for (int i = 0; i < 8; ++i) {
    auto b = test::random_block(layers, n, kv, d, 10 + i * n, at::kBFloat16);
    if (i == 2) b.keys[1] = b.values[1] = at::Tensor();  // absent from a layer (StreamKV)
    made.add(b);
  }
  const std::string path = dir + "/memory.kv";
  nlohmann::json blocks;
  {
    SnapshotDataWriter data(path);
    blocks = write_blocks(made, 0, data);
    data.finish();
  }
  MemoryBank loaded({layers, at::kCPU, 3 * block_bytes, dir + "/spill2"});
  {
    const SnapshotDataReader data(path);
    add_logged_blocks(blocks, data, loaded);
  }
  REQUIRE(loaded.size() == made.size());
  const auto &a = made.accounting(), &b = loaded.accounting();
  CHECK(a.blocks == b.blocks);
  CHECK(a.tokens == b.tokens);
  CHECK(a.layer_tokens == b.layer_tokens);
  CHECK(a.ram_bytes == b.ram_bytes);
  CHECK(a.disk_bytes == b.disk_bytes);
  CHECK(a.representative_bytes == b.representative_bytes);
  for (int64_t id = 0; id < made.size(); ++id) {
    const KvBlock x = made.block(id), y = loaded.block(id);
    CHECK(at::equal(x.positions, y.positions));
    CHECK(x.first_frame == y.first_frame);
    for (int64_t l = 0; l < layers; ++l) {
      REQUIRE(made.in_layer(id, l) == loaded.in_layer(id, l));
      if (!made.in_layer(id, l)) continue;
      CHECK(at::equal(x.keys[l], y.keys[l]));
      CHECK(at::equal(x.values[l], y.values[l]));
      CHECK(at::equal(made.representative(id, l), loaded.representative(id, l)));
      const at::Tensor k = at::empty(loaded.key_shape(id, l), at::kBFloat16), v = at::empty_like(k);
      loaded.read_layer(id, l, k, v);
      CHECK(at::equal(k, x.keys[l]));
      CHECK(at::equal(v, x.values[l]));
    }
  }

  // One flipped byte in block 5's values of layer 2: refused, naming the snapshot, never read as data.
  const int64_t base = blocks[5]["base"].get<int64_t>();
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(base + block_bytes - 3);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x20;
    f.seekp(base + block_bytes - 3);
    f.write(&c, 1);
  }
  const at::Tensor k = at::empty(loaded.key_shape(5, 2), at::kBFloat16), v = at::empty_like(k);
  CHECK_THROWS_AS(loaded.read_layer(5, 2, k, v), MappedFileChanged);
  CHECK_THROWS_AS(loaded.block(5), MappedFileChanged);
  try {
    loaded.block(5);
  } catch (const MappedFileChanged& e) {
    CHECK(e.file() == path);
  }
  loaded.read_layer(4, 2, k, v);  // the other blocks still read
  CHECK(at::equal(k, made.block(4).keys[2]));
}

TEST_CASE("a snapshot removed from the cache while a bank maps it still reads, bit for bit", "[snapshot]") {
  // `svqa cache gc|rm` (or another run's memory.max_gb) removing the entry a run replays: the run's
  // bank holds the data file open, so its blocks read unchanged and the run goes on; the file's space
  // is freed when the bank lets go. (It was reopened by name at each read: "cannot open spill file".)
  at::manual_seed(1);
  const int64_t layers = 2, n = 4, kv = 2, d = 8;
  const std::string dir = test::temp_dir("snapshot_removed");
  std::filesystem::create_directories(dir + "/entry");
  MemoryBank made({layers, at::kCPU, -1, ""});
  for (int i = 0; i < 3; ++i) made.add(test::random_block(layers, n, kv, d, i * n, at::kBFloat16));
  const std::string path = dir + "/entry/memory.kv";
  nlohmann::json blocks;
  {
    SnapshotDataWriter data(path);
    blocks = write_blocks(made, 0, data);
    data.finish();
  }
  MemoryBank loaded({layers, at::kCPU, 0, dir + "/spill"});  // every block on the disk tier: read from the file
  {
    const SnapshotDataReader data(path);
    add_logged_blocks(blocks, data, loaded);
  }  // the reader is gone: what reads now is the bank's own hold on the file
  std::filesystem::remove_all(dir + "/entry");
  REQUIRE_FALSE(std::filesystem::exists(path));
  for (int64_t id = 0; id < made.size(); ++id)
    for (int64_t l = 0; l < layers; ++l) {
      const at::Tensor k = at::empty(loaded.key_shape(id, l), at::kBFloat16), v = at::empty_like(k);
      loaded.read_layer(id, l, k, v);
      CHECK(at::equal(k, made.block(id).keys[l]));
      CHECK(at::equal(v, made.block(id).values[l]));
      CHECK(at::equal(loaded.block(id).values[l], made.block(id).values[l]));
    }
}

TEST_CASE("a live log's reader takes whole records only and refuses a changed one", "[snapshot]") {
  const std::string dir = test::temp_dir("live_log");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/log.jsonl";
  LiveLogWriter writer(path);
  LiveLogReader reader(path);
  CHECK(reader.read_new().empty());
  writer.append({{"call", "begin_stream"}});
  const std::string second = nlohmann::json{{"call", "encode"}}.dump();
  const std::string line = hex64(checksum64(second.data(), second.size())) + " " + second + "\n";
  {
    std::ofstream torn(path, std::ios::app | std::ios::binary);  // a writer stopped mid-record
    torn << line.substr(0, 20);
  }
  const auto first = reader.read_new();
  REQUIRE(first.size() == 1);
  CHECK(first[0]["call"] == "begin_stream");
  CHECK(reader.read_new().empty());  // the torn record is not taken
  {
    std::ofstream rest(path, std::ios::app | std::ios::binary);
    rest << line.substr(20);
  }
  const auto completed = reader.read_new();
  REQUIRE(completed.size() == 1);
  CHECK(completed[0]["call"] == "encode");
  {
    std::ofstream changed(path, std::ios::app | std::ios::binary);  // a whole record whose bytes changed
    std::string bad = line;
    bad[30] ^= 0x01;
    changed << bad;
  }
  CHECK_THROWS_AS(reader.read_new(), SnapshotDamaged);
}

}  // namespace svqa
