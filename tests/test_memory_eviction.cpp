// Memory an encoder compacts, evicts or rewrites per layer (MemoryBank::remove_from_layer, remove,
// replace_layer):
// what a layer stores, its representatives, the counts and bytes, and the disk tier all follow, on
// small blocks whose every number is known.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/memory/memory_bank.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

constexpr int64_t kLayers = 3, kTokens = 5, kKv = 2, kDim = 8;
constexpr int64_t kBlockBytes = kLayers * 2 * kTokens * kKv * kDim * 4;  // float32
constexpr int64_t kRepBytes = kKv * kDim * 4;  // a representative: the mean key per kv head

std::vector<KvBlock> fill(MemoryBank& bank, int n) {
  at::manual_seed(3);
  std::vector<KvBlock> blocks;
  for (int i = 0; i < n; ++i) {
    blocks.push_back(test::random_block(kLayers, kTokens, kKv, kDim, i * kTokens));
    blocks.back().first_frame = blocks.back().last_frame = i;
    bank.add(blocks.back());
  }
  return blocks;
}

}  // namespace

TEST_CASE("a block taken out of a layer leaves its reads and counts there; out of all, it is evicted", "[memory]") {
  MemoryBank bank(test::cpu_bank(kLayers));
  const auto blocks = fill(bank, 4);
  const auto& a = bank.accounting();

  bank.remove_from_layer(1, 0);
  CHECK_FALSE(bank.in_layer(1, 0));
  CHECK(bank.in_layer(1, 1));
  CHECK(bank.blocks_in_layer(0) == std::vector<int64_t>{0, 2, 3});
  CHECK(bank.blocks_in_layer(1) == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(bank.representative_ids(0) == std::vector<int64_t>{0, 2, 3});
  CHECK(at::equal(bank.representatives(0),
                  at::stack({blocks[0].representatives[0], blocks[2].representatives[0], blocks[3].representatives[0]})));
  CHECK_FALSE(bank.representative(1, 0).defined());
  CHECK(at::equal(bank.representative(2, 0), blocks[2].representatives[0]));
  CHECK(bank.key_shape(1, 0).empty());
  const KvBlock one = bank.block(1);
  CHECK_FALSE(one.in_layer(0));
  CHECK(at::equal(one.keys[1], blocks[1].keys[1]));
  auto k = at::empty({kTokens, kKv, kDim}), v = at::empty({kTokens, kKv, kDim});
  CHECK_THROWS_AS(bank.read_layer(1, 0, k, v), std::invalid_argument);
  CHECK_THROWS_AS(bank.remove_from_layer(1, 0), std::invalid_argument);
  CHECK(a.blocks == 4);
  CHECK(a.tokens == 4 * kTokens);
  CHECK(a.layer_tokens == 4 * kLayers * kTokens - kTokens);
  CHECK(a.ram_bytes == 4 * kBlockBytes);  // one allocation: held until the block leaves every layer
  CHECK(a.representative_bytes == (4 * kLayers - 1) * kRepBytes);

  bank.remove(1);
  for (int64_t l = 0; l < kLayers; ++l) CHECK(bank.blocks_in_layer(l) == std::vector<int64_t>{0, 2, 3});
  CHECK(a.blocks == 3);
  CHECK(a.tokens == 3 * kTokens);
  CHECK(a.layer_tokens == 3 * kLayers * kTokens);
  CHECK(a.ram_bytes == 3 * kBlockBytes);
  CHECK(a.bytes_by_granularity[static_cast<int>(Granularity::Frame)] == 3 * kBlockBytes);
  CHECK(a.tokens_by_granularity[static_cast<int>(Granularity::Frame)] == 3 * kTokens);
  CHECK(a.representative_bytes == 3 * kLayers * kRepBytes);
  CHECK(bank.info(1).first_frame == 1);  // metadata stays, ids never move
  CHECK(bank.size() == 4);

  // A rewrite: block 2 keeps tokens 1 and 3 in layer 2 only, as a new block; the old one goes.
  KvBlock kept = blocks[2];
  const auto rows = at::tensor({1, 3}, at::kLong);
  kept.positions = blocks[2].positions.index_select(1, rows);
  for (int64_t l = 0; l < kLayers; ++l) {
    const bool stays = l == 2;
    kept.keys[l] = stays ? blocks[2].keys[l].index_select(0, rows) : at::Tensor();
    kept.values[l] = stays ? blocks[2].values[l].index_select(0, rows) : at::Tensor();
    kept.representatives[l] = stays ? mean_key_representative(kept.keys[l]) : at::Tensor();
  }
  CHECK(bank.add(kept) == 4);
  bank.remove(2);
  CHECK(bank.blocks_in_layer(0) == std::vector<int64_t>{0, 3});
  CHECK(bank.blocks_in_layer(2) == std::vector<int64_t>{0, 3, 4});
  CHECK(at::equal(bank.block(4).keys[2], blocks[2].keys[2].index_select(0, rows)));
  CHECK(a.blocks == 3);
  CHECK(a.tokens == 2 * kTokens + 2);
  CHECK(a.layer_tokens == 2 * kLayers * kTokens + 2);
  CHECK(a.ram_bytes == 2 * kBlockBytes + 2 * 2 * kKv * kDim * 4);
  CHECK(a.representative_bytes == (2 * kLayers + 1) * kRepBytes);
}

TEST_CASE("evicting spilled and resident blocks frees their files and RAM; the disk tier stays exact", "[memory][spill]") {
  const auto dir = test::temp_dir("evict_spill");
  MemoryBank bank({kLayers, at::kCPU, 2 * kBlockBytes, dir});
  const auto blocks = fill(bank, 5);  // 0, 1, 2 spilled; 3, 4 resident
  const auto& a = bank.accounting();
  const auto file = [&](int id) { return std::filesystem::path(dir) / ("block_" + std::to_string(id) + ".kv"); };
  REQUIRE(bank.spilled(0));
  REQUIRE(a.disk_bytes == 3 * kBlockBytes);

  bank.remove_from_layer(0, 1);  // the file keeps the layer's bytes until the block leaves every layer
  CHECK(std::filesystem::exists(file(0)));
  CHECK(a.disk_bytes == 3 * kBlockBytes);
  const KvBlock zero = bank.block(0);
  CHECK_FALSE(zero.in_layer(1));
  CHECK(at::equal(zero.keys[2], blocks[0].keys[2]));
  auto k = at::empty({kTokens, kKv, kDim}), v = at::empty({kTokens, kKv, kDim});
  bank.read_layer(0, 2, k, v);
  CHECK(at::equal(v, blocks[0].values[2]));

  bank.remove(0);
  CHECK_FALSE(std::filesystem::exists(file(0)));
  CHECK_FALSE(bank.spilled(0));
  CHECK(a.disk_bytes == 2 * kBlockBytes);
  bank.remove(4);
  CHECK(a.ram_bytes == kBlockBytes);

  // Later blocks spill past the budget; the evicted resident block 4 is passed over, never written.
  at::manual_seed(4);
  std::vector<KvBlock> later;
  for (int i = 5; i < 8; ++i) {
    later.push_back(test::random_block(kLayers, kTokens, kKv, kDim, i * kTokens));
    bank.add(later.back());
  }
  CHECK(bank.spilled(3));
  CHECK_FALSE(bank.spilled(4));
  CHECK_FALSE(std::filesystem::exists(file(4)));
  CHECK(bank.spilled(5));
  CHECK(a.ram_bytes == 2 * kBlockBytes);
  CHECK(a.disk_bytes == 4 * kBlockBytes);  // 1, 2, 3, 5
  CHECK(a.blocks == 6);
  CHECK(at::equal(bank.block(5).keys[0], later[0].keys[0]));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a rewritten layer holds one Segment block of what it keeps, spanning what it replaced; blocks leaving "
          "their last layer are evicted and their spill files removed",
          "[memory][spill]") {
  const auto dir = test::temp_dir("replace_layer");
  MemoryBank bank({kLayers, at::kCPU, 2 * kBlockBytes, dir});
  const auto blocks = fill(bank, 4);  // 0, 1 spilled; 2, 3 resident
  const auto& a = bank.accounting();
  REQUIRE(bank.spilled(0));

  // The layer's memory, read from both tiers, back to back in id order.
  const LayerMemory memory = bank.layer_memory(1);
  std::vector<at::Tensor> keys, positions;
  for (const auto& b : blocks) keys.push_back(b.keys[1]), positions.push_back(b.positions);
  CHECK(at::equal(memory.keys, at::cat(keys)));
  CHECK(at::equal(memory.positions, at::cat(positions, 1)));

  // Layer 1 keeps tokens 2 and 17 (of blocks 0 and 3): one Segment block, in layer 1 only.
  const auto rows = at::tensor({2, 17}, at::kLong);
  const int64_t id = bank.replace_layer(1, {memory.keys.index_select(0, rows), memory.values.index_select(0, rows),
                                            memory.positions.index_select(1, rows)});
  CHECK(id == 4);
  const KvBlock& segment = bank.info(id);
  CHECK(segment.granularity == Granularity::Segment);
  CHECK(segment.first_frame == 0);
  CHECK(segment.last_frame == 3);
  CHECK(bank.blocks_in_layer(1) == std::vector<int64_t>{4});
  for (const int64_t l : {0, 2}) CHECK(bank.blocks_in_layer(l) == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(at::equal(bank.block(id).keys[1], memory.keys.index_select(0, rows)));
  CHECK_FALSE(bank.block(id).in_layer(0));
  CHECK(at::equal(bank.representative(id, 1), mean_key_representative(memory.keys.index_select(0, rows))));
  CHECK(a.blocks == 5);  // the old blocks are still in layers 0 and 2
  CHECK(a.layer_tokens == 2 * 4 * kTokens + 2);

  // Rewriting the other layers evicts them: their RAM and files go, the rewrites stay.
  const auto file = [&](int n) { return std::filesystem::path(dir) / ("block_" + std::to_string(n) + ".kv"); };
  const int64_t kept_bytes = 2 * 2 * kKv * kDim * 4;  // two tokens' K and V in one layer
  for (const int64_t l : {0, 2}) {
    const LayerMemory m = bank.layer_memory(l);
    bank.replace_layer(l, {m.keys.narrow(0, 0, 2), m.values.narrow(0, 0, 2), m.positions.narrow(1, 0, 2)});
  }
  CHECK(a.blocks == 3);
  CHECK(a.tokens == 3 * 2);
  CHECK(a.layer_tokens == 3 * 2);
  CHECK(a.ram_bytes + a.disk_bytes == 3 * kept_bytes);
  CHECK(a.representative_bytes == 3 * kRepBytes);
  for (int n = 0; n < 4; ++n) CHECK_FALSE(std::filesystem::exists(file(n)));
  CHECK(bank.blocks_in_layer(2) == std::vector<int64_t>{6});
  CHECK(at::equal(bank.block(6).values[2], blocks[0].values[2].narrow(0, 0, 2)));
  CHECK_THROWS_AS(bank.replace_layer(1, {}), std::invalid_argument);  // a layer rewritten needs what it keeps
  std::filesystem::remove_all(dir);
}

}  // namespace svqa
