// The memory bank's KV codec: quantised groups round-trip within half their scale, and a bank
// under int4 holds (in RAM, on disk and in its accounting) the coded bytes, read back decoded.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>

#include "core/config/experiment.h"
#include "core/memory/kv_codec.h"
#include "core/memory/memory_bank.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

// The largest error a decoded value may have: half its group's scale, (max − min) / (2^bits − 1) of
// the group's tokens in that channel, computed here from the original tensor [n, heads, d].
at::Tensor error_bound(const at::Tensor& x, int64_t group, int bits) {
  const int64_t n = x.size(0);
  at::Tensor bound = at::empty_like(x, at::kFloat);
  for (int64_t start = 0; start < n; start += group) {
    const auto g = x.narrow(0, start, std::min(group, n - start)).to(at::kFloat);
    const auto scale = (std::get<0>(g.max(0)) - std::get<0>(g.min(0))) / ((1 << bits) - 1);
    bound.narrow(0, start, g.size(0)).copy_(scale.unsqueeze(0).expand_as(g) / 2);
  }
  return bound;
}

int64_t stored_bytes(const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; }

}  // namespace

TEST_CASE("kv codec: int8 and int4 groups round-trip within half their group's scale", "[memory][kv_codec]") {
  at::manual_seed(3);
  // 37 tokens: the last group of 8 is partial (5 tokens); one channel constant (scale clamped).
  at::Tensor x = at::randn({37, 2, 8}) * at::linspace(0.1, 4.0, 8);
  x.select(2, 0).fill_(1.5);
  // Groups of 8 (the last of 5 partial: 5 tokens), 7 (odd: int4's code pairs cross groups) and 1024
  // (one partial group, larger than the block).
  for (const auto& [type, bits, group] : {std::tuple{"int8", 8, 8}, std::tuple{"int4", 4, 8}, std::tuple{"int4", 4, 7},
                                          std::tuple{"int8", 8, 1024}, std::tuple{"int4", 4, 1024}}) {
    INFO(type << " group " << group);
    const KvCodec codec({type, group});
    const at::Tensor coded = codec.encode(x);
    CHECK(coded.scalar_type() == at::kByte);
    CHECK(coded.numel() == codec.coded_bytes({37, 2, 8}));
    // A code for each of the 37 tokens × 16 channels (none for padding), then a float32 scale and minimum
    // per group and channel.
    const int64_t groups = (37 + group - 1) / group;
    CHECK(coded.numel() == (16 * 37 * bits + 7) / 8 + 2 * 16 * groups * 4);
    const at::Tensor back = codec.decode(coded, {37, 2, 8}, at::kFloat);
    const at::Tensor err = (back - x).abs();
    const at::Tensor bound = error_bound(x, group, bits);
    CHECK((err <= bound * (1 + 1e-5) + 1e-6).all().item<bool>());
    CHECK(at::allclose(codec.scales_per_value(coded, {37, 2, 8}) / 2, bound, 1e-5, 1e-7));
    CHECK(at::equal(back.select(2, 0), x.select(2, 0)));  // a constant channel comes back exact
    // The bound is reached, not loose: some value is off by more than a quarter of its scale.
    CHECK((err > bound / 2).any().item<bool>());
  }
}

TEST_CASE("kv codec: a bad type or group size is one line naming it", "[memory][kv_codec]") {
  const KvCodecOptions int3{"int3", 8}, none{"int4", 0}, huge{"int4", 65536};
  CHECK_THROWS_WITH(KvCodec(int3), "kv codec: unknown type 'int3'; known: identity, int8, int4");
  CHECK_THROWS_WITH(KvCodec(none), "kv codec: group_size 0: expected 1 to 1024 tokens");
  CHECK_THROWS_WITH(KvCodec(huge), "kv codec: group_size 65536: expected 1 to 1024 tokens");
  CHECK(KvCodec({"int4", kMaxKvCodecGroup}).group_size() == 1024);
  // The experiment's key accepts what the codec does, and says which range.
  const auto stream_fields = Schema<StreamOptions>().fields();
  const auto group = std::find_if(stream_fields.begin(), stream_fields.end(),
                                  [](const FieldInfo& f) { return f.name == "kv_codec_group"; });
  REQUIRE(group != stream_fields.end());
  CHECK(group->min == 1.0);
  CHECK(group->max == static_cast<double>(kMaxKvCodecGroup));
  CHECK(KvCodec().identity());
}

TEST_CASE("kv codec: a block smaller than a group holds its tokens' codes, not a whole group's", "[memory][kv_codec]") {
  // The audit's case: kv_codec_group far above a block's tokens once padded every block to a whole
  // group (int4 memory 910x the uncoded size). A 4-token block under the largest group: 4 codes per channel.
  at::manual_seed(5);
  const int64_t layers = 2, n = 4, kv = 2, d = 16;
  MemoryBankOptions options = test::cpu_bank(layers);
  options.codec = {"int4", kMaxKvCodecGroup};
  MemoryBank coded(options);
  MemoryBank plain(test::cpu_bank(layers));
  const KvBlock b = test::random_block(layers, n, kv, d, 0, at::kHalf);
  coded.add(b);
  plain.add(b);
  const int64_t tensors = layers * 2, channels = kv * d;
  CHECK(coded.accounting().ram_bytes == tensors * (channels * n / 2 + 2 * channels * 4));
  CHECK(coded.accounting().ram_bytes < 2 * plain.accounting().ram_bytes);  // scales dominate a tiny block, no more
}

TEST_CASE("int4 memory holds about a quarter of fp16 plus scales, measured, in RAM and on disk", "[memory][kv_codec]") {
  at::manual_seed(4);
  const int64_t layers = 2, n = 50, kv = 2, d = 16, group = 50;
  MemoryBankOptions plain_options = test::cpu_bank(layers);
  MemoryBankOptions coded_options = plain_options;
  coded_options.codec = {"int4", group};
  MemoryBank plain(plain_options), coded(coded_options);
  const std::string spill = test::temp_dir("kv_codec_spill");
  MemoryBankOptions spilled_options = coded_options;
  spilled_options.ram_budget_bytes = 0;  // every block on disk
  spilled_options.spill_dir = spill;
  MemoryBank spilled(spilled_options);
  std::vector<KvBlock> originals;
  for (int i = 0; i < 4; ++i) {
    const KvBlock b = test::random_block(layers, n, kv, d, i * n, at::kHalf);
    originals.push_back(b);
    plain.add(b);
    coded.add(b);
    spilled.add(b);
  }
  // Measured: the bytes of the tensors the bank holds, summed.
  int64_t measured = 0;
  for (int64_t id = 0; id < coded.size(); ++id)
    for (int64_t l = 0; l < layers; ++l)
      measured += stored_bytes(coded.info(id).keys[l]) + stored_bytes(coded.info(id).values[l]);
  CHECK(measured == coded.accounting().ram_bytes);
  const int64_t fp16 = plain.accounting().ram_bytes;
  const int64_t tensors = 4 * layers * 2, scales = tensors * kv * d * (n / group) * 2 * 4;  // a scale and a minimum per group
  CHECK(fp16 == tensors * n * kv * d * 2);
  CHECK(measured == fp16 / 4 + scales);
  INFO("int4 / fp16 bytes: " << static_cast<double>(measured) / fp16);
  CHECK(static_cast<double>(measured) / fp16 < 0.35);

  // On disk: the spill files hold the coded bytes, and the accounting says so.
  int64_t on_disk = 0;
  for (const auto& f : std::filesystem::directory_iterator(spill)) on_disk += std::filesystem::file_size(f.path());
  CHECK(spilled.accounting().ram_bytes == 0);
  CHECK(spilled.accounting().disk_bytes == measured);
  CHECK(on_disk == measured);

  // Read back decoded, the same from RAM and from disk, within the bound of the original.
  for (int64_t id = 0; id < 4; ++id)
    for (int64_t l = 0; l < layers; ++l) {
      INFO("block " << id << " layer " << l);
      CHECK(coded.key_shape(id, l) == std::vector<int64_t>{n, kv, d});
      at::Tensor k = at::empty({n, kv, d}, at::kHalf), v = at::empty({n, kv, d}, at::kHalf);
      at::Tensor ks = at::empty({n, kv, d}, at::kFloat), vs = at::empty({n, kv, d}, at::kFloat);
      coded.read_layer(id, l, k, v);
      spilled.read_layer(id, l, ks, vs);
      CHECK(at::equal(k, ks.to(at::kHalf)));
      CHECK(at::equal(v, vs.to(at::kHalf)));
      const KvBlock whole = spilled.block(id);
      CHECK(whole.keys[l].scalar_type() == at::kHalf);
      CHECK(at::equal(whole.keys[l], k));
      const at::Tensor original = originals[id].values[l];
      const at::Tensor bound = error_bound(original, group, 4);
      // Half-precision output adds its own rounding (at most 2^-11 relative).
      CHECK(((v.to(at::kFloat) - original.to(at::kFloat)).abs() <=
             bound * (1 + 1e-5) + original.to(at::kFloat).abs() * 1e-3 + 1e-6)
                .all()
                .item<bool>());
    }
  std::filesystem::remove_all(spill);
}

}  // namespace svqa
