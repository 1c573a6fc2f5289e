// FluxMem's memory rules against a Python transcription of its reference code
// (tests/python/fluxmem_reference.py, in the reference's own layout: one sequence, frames told apart by
// their mRoPE ids), on a planted clip whose answer is known: 8 temporal patches of a 4×4 grid, every
// token a direction of its own (one-hot × 2 plus noise 0.01), with 2 patches short-term and 2 mid-term:
//   f0 → f1  two cells change (X)            f0 keeps X (long-term, its two tokens too far apart to merge)
//   f1 → f2  six cells become objects A, B   f1 keeps those six cells, some merged
//   f2 → f3  A and B change again            f2 keeps A and B, merged into one token each (the mean)
//   f3 = f4 = f5                             f3 and f4 keep nothing (everything seen again next)
//   f5 → f6  three cells change (P)          f5 keeps P (mid-term: not merged)
//   f6, f7                                   short-term: every token

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/video/npy.h"
#include "strategies/encoding/fluxmem/fluxmem_rules.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

constexpr int64_t kSide = 4, kTokens = kSide * kSide, kDim = 64, kFrames = 8;
int64_t cell(int64_t r, int64_t c) { return r * kSide + c; }
const std::vector<int64_t> kX{cell(3, 2), cell(3, 3)};
const std::vector<int64_t> kA{cell(1, 0), cell(2, 0), cell(1, 1)}, kB{cell(2, 1), cell(1, 2), cell(2, 2)};
const std::vector<int64_t> kP{cell(0, 0), cell(0, 1), cell(3, 3)};

at::Tensor rows_of(const std::vector<int64_t>& cells) { return at::tensor(cells, at::kLong); }

// The clip above: frame f's tokens [16, 64].
std::vector<at::Tensor> planted_clip() {
  const at::Tensor e = at::eye(kDim);
  std::vector<at::Tensor> f{e.narrow(0, 0, kTokens).clone()};
  const auto changed = [&](const at::Tensor& from, const std::vector<int64_t>& cells, int64_t first_direction) {
    at::Tensor next = from.clone();
    next.index_copy_(0, rows_of(cells), e.narrow(0, first_direction, static_cast<int64_t>(cells.size())));
    return next;
  };
  f.push_back(changed(f[0], kX, 50));
  at::Tensor objects = f[1].clone();
  for (const int64_t c : kA) objects[c].copy_(e[40]);
  for (const int64_t c : kB) objects[c].copy_(e[41]);
  f.push_back(objects);
  std::vector<int64_t> ab = kA;
  ab.insert(ab.end(), kB.begin(), kB.end());
  f.push_back(changed(f[2], ab, 56));
  f.push_back(f[3].clone()), f.push_back(f[3].clone());
  f.push_back(changed(f[5], kP, 44)), f.push_back(f[6].clone());
  for (auto& t : f) t = t * 2 + 0.01 * at::randn({kTokens, kDim});
  return f;
}

std::vector<int64_t> as_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

std::vector<int64_t> sorted(std::vector<int64_t> v) { return std::sort(v.begin(), v.end()), v; }

}  // namespace

TEST_CASE("fluxmem: the tokens each frame keeps and merges equal the reference's steps", "[fluxmem]") {
  at::manual_seed(3);
  const std::string dir = test::temp_dir("fluxmem");
  std::filesystem::create_directories(dir);
  const std::vector<at::Tensor> clip = planted_clip();
  const at::Tensor rows = at::arange(kTokens, at::kLong).div(kSide, "floor"), cols = at::arange(kTokens, at::kLong).remainder(kSide);
  std::vector<FluxmemFrame> frames;
  for (const auto& t : clip) frames.push_back({t, rows, cols});
  FluxmemSettings settings;
  settings.short_term_units = 2, settings.mid_term_units = 2;
  const auto ours = fluxmem_reduce_clip(frames, settings);
  REQUIRE(ours.size() == static_cast<size_t>(kFrames));

  // The planted answer.
  CHECK(as_vector(ours[0].kept.rows) == sorted(kX));
  CHECK(ours[0].stage == FluxmemStage::LongTerm);
  REQUIRE(ours[2].kept.rows.numel() == 2);  // A and B, one anchor each, carrying its object's mean
  const auto anchors = as_vector(ours[2].kept.rows);
  CHECK(std::count(kA.begin(), kA.end(), anchors[0]) == 1);
  CHECK(std::count(kB.begin(), kB.end(), anchors[1]) == 1);
  CHECK(at::allclose(ours[2].kept.tokens[0], clip[2].index_select(0, rows_of(kA)).mean(0), 0, 1e-6));
  CHECK(at::allclose(ours[2].kept.tokens[1], clip[2].index_select(0, rows_of(kB)).mean(0), 0, 1e-6));
  CHECK(ours[2].merged_away == 4);
  CHECK(ours[3].kept.rows.numel() == 0);
  CHECK(ours[4].kept.rows.numel() == 0);
  CHECK(as_vector(ours[5].kept.rows) == sorted(kP));
  CHECK(ours[5].stage == FluxmemStage::MidTerm);
  for (const int f : {6, 7}) {
    CHECK(ours[static_cast<size_t>(f)].stage == FluxmemStage::ShortTerm);
    CHECK(at::equal(ours[static_cast<size_t>(f)].kept.tokens, clip[static_cast<size_t>(f)]));
  }

  // The reference, on the same tokens laid out as one sequence between text.
  write_npy(dir + "/frames.npy", at::stack(clip));
  write_npy(dir + "/rows.npy", rows);
  write_npy(dir + "/cols.npy", cols);
  std::ofstream(dir + "/settings.json") << nlohmann::json{
      {"short_term_frames", 4}, {"mid_term_frames", 4}, {"direct_drop_sim_threshold", 0.8}, {"prefix", 3},
      {"suffix", 2}}.dump();
  REQUIRE(test::run_python("fluxmem_reference.py", dir));
  for (int64_t f = 0; f < kFrames; ++f) {
    INFO("frame " << f);
    const auto tag = std::to_string(f) + ".npy";
    CHECK(as_vector(ours[static_cast<size_t>(f)].kept.rows) == as_vector(read_npy(dir + "/kept_" + tag)));
    CHECK(at::allclose(ours[static_cast<size_t>(f)].kept.tokens, read_npy(dir + "/tokens_" + tag), 0, 1e-6));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("fluxmem: Otsu's threshold splits two groups and falls back to the median", "[fluxmem]") {
  const at::Tensor two = at::cat({at::full({5}, 0.1), at::full({3}, 0.9)});
  const auto t = fluxmem_otsu(two, false);
  REQUIRE(t);
  CHECK(*t > 0.1);
  CHECK(*t < 0.9);
  CHECK(fluxmem_otsu(at::full({4}, 0.3), true) == Approx(0.3));  // all equal: the median
  CHECK_FALSE(fluxmem_otsu(at::full({4}, 0.3), false));          // no split, no fallback: none
  CHECK_FALSE(fluxmem_otsu(at::empty({0}), true));
}

}  // namespace svqa
