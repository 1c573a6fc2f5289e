// StreamKV's two pure rules against Python transcriptions of the reference code
// (tests/python/streamkv_reference.py): online segmentation with merging, and the layer-adaptive
// budget (obtain_cdf_num + rescale_sum_match). Plus known answers: planted scene cuts are found.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "strategies/encoding/streamkv/semantic_segmenter.h"
#include "strategies/kit/layer_budget.h"

namespace svqa {
namespace {

// Runs the transcription (tests run in the repository root) and parses what it prints.
nlohmann::json reference_cases(const std::string& rule, int cases) {
  const std::string cmd = ".venv/bin/python tests/python/streamkv_reference.py " + rule + " --cases " +
                          std::to_string(cases) + " --seed 0";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buffer[1 << 16];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  REQUIRE(pclose(pipe) == 0);
  return nlohmann::json::parse(text).at("cases");
}

at::Tensor to_tensor(const nlohmann::json& rows) {
  std::vector<at::Tensor> out;
  for (const auto& row : rows) out.push_back(at::tensor(row.get<std::vector<double>>(), at::kDouble));
  return at::stack(out);
}

nlohmann::json as_json(const Segment& s) {
  nlohmann::json entries = nlohmann::json::array(), sums = nlohmann::json::array();
  for (const auto& e : s.entries) {
    entries.push_back(e.units);
    sums.push_back(e.features.sum().item<double>());
  }
  return {{"entries", entries}, {"merges", s.merges}, {"feature_sums", sums}};
}

}  // namespace

TEST_CASE("segmentation equals the reference rule on 120 random streams (cuts and merges)", "[streamkv]") {
  const auto cases = reference_cases("segmentation", 120);
  REQUIRE(cases.size() == 120);
  int64_t merges = 0, cuts = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& tc = cases[c];
    INFO("case " << c);
    OnlineSegmenter seg({"semantic", tc["min"].get<int64_t>(), tc["max"].get<int64_t>(), tc["theta"].get<double>()});
    std::vector<Segment> got;
    for (const auto& frame : tc["frames"])
      if (auto s = seg.push(to_tensor(frame))) got.push_back(std::move(*s));
    if (auto s = seg.flush()) got.push_back(std::move(*s));
    const auto& want = tc["segments"];
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const auto mine = as_json(got[i]);
      CHECK(mine["entries"] == want[i]["entries"]);
      CHECK(mine["merges"] == want[i]["merges"]);
      for (size_t e = 0; e < want[i]["feature_sums"].size(); ++e)
        CHECK(mine["feature_sums"][e].get<double>() == Approx(want[i]["feature_sums"][e].get<double>()).epsilon(1e-12));
      merges += static_cast<int64_t>(got[i].merges.size());
    }
    cuts += static_cast<int64_t>(got.size()) - 1;
  }
  CHECK(merges > 500);  // the cases exercise both rules
  CHECK(cuts > 500);
}

TEST_CASE("segmentation finds planted scene cuts; uniform mode cuts every max_size frames", "[streamkv]") {
  at::manual_seed(3);
  // Five scenes of 6, 9, 4, 12, 7 frames: near-identical frames within a scene, unrelated across.
  const std::vector<int64_t> lengths{6, 9, 4, 12, 7};
  std::vector<at::Tensor> frames;
  for (const int64_t n : lengths) {
    const auto scene = at::randn({5, 16});
    for (int64_t i = 0; i < n; ++i) frames.push_back(scene + 1e-3 * at::randn({5, 16}));
  }
  OnlineSegmenter seg({"semantic", 3, 64, 0.95});
  std::vector<int64_t> sizes;
  for (const auto& f : frames)
    if (auto s = seg.push(f)) sizes.push_back(static_cast<int64_t>(s->entries.size()));
  sizes.push_back(static_cast<int64_t>(seg.flush()->entries.size()));
  CHECK(sizes == lengths);

  // A full segment (max 5) merges instead of growing: the 12-frame scene stays at 5 entries holding all 12.
  OnlineSegmenter capped({"semantic", 3, 5, 0.95});
  std::vector<Segment> segments;
  for (const auto& f : frames)
    if (auto s = capped.push(f)) segments.push_back(*s);
  REQUIRE(segments.size() == 4);
  CHECK(segments[3].entries.size() == 5);
  int64_t held = 0;
  for (const auto& e : segments[3].entries) held += static_cast<int64_t>(e.units.size());
  CHECK(held == 12);
  CHECK(segments[3].merges.size() == 7);

  OnlineSegmenter uniform({"uniform", 1, 8, 0.95});
  std::vector<int64_t> chunks;
  for (const auto& f : frames)
    if (auto s = uniform.push(f)) chunks.push_back(static_cast<int64_t>(s->entries.size()));
  chunks.push_back(static_cast<int64_t>(uniform.flush()->entries.size()));
  CHECK(chunks == std::vector<int64_t>{8, 8, 8, 8, 6});
  CHECK_FALSE(uniform.flush().has_value());
}

TEST_CASE("layer-adaptive budget equals obtain_cdf_num + rescale_sum_match on 150 random score sets", "[streamkv]") {
  const auto cases = reference_cases("budget", 150);
  REQUIRE(cases.size() == 150);
  int64_t rescaled_differs = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& tc = cases[c];
    INFO("case " << c);
    std::vector<at::Tensor> scores;
    for (const auto& s : tc["scores"]) scores.push_back(at::tensor(s.get<std::vector<double>>(), at::kFloat));
    const auto counts = cdf_layer_counts(scores, tc["target"].get<int64_t>());
    CHECK(counts == tc["counts"].get<std::vector<int64_t>>());
    const auto rescaled = rescale_sum_match(counts, tc["lo"].get<double>(), tc["hi"].get<double>());
    CHECK(rescaled == tc["rescaled"].get<std::vector<int64_t>>());
    rescaled_differs += rescaled != counts;
    for (const int64_t k : counts) CHECK(k >= 1);
  }
  CHECK(rescaled_differs > 50);
}

TEST_CASE("layer-adaptive budget: one candidate or equal scores give no NaN; peaked layers take fewer", "[streamkv]") {
  // One candidate per layer, and layers of equal scores: uniform mass, never NaN.
  CHECK(cdf_layer_counts({at::ones({1}), at::ones({1}), at::ones({1})}, 3) == std::vector<int64_t>{1, 1, 1});
  const auto equal = cdf_layer_counts({at::full({10}, 2.0), at::full({10}, -1.0)}, 10);
  CHECK(equal[0] == equal[1]);
  CHECK(std::abs(equal[0] + equal[1] - 10) < 5);
  // A layer with one dominant block needs fewer blocks for the same mass than a flat one.
  auto peaked = at::zeros({40});
  peaked[7] = 50.0;
  const auto flat = at::linspace(0, 0.1, 40);
  const auto k = cdf_layer_counts({peaked, flat}, 30);
  CHECK(k[0] < k[1]);
  // rescale: equal counts pass through; otherwise the sum is kept and the bounds hold.
  CHECK(rescale_sum_match({5, 5, 5}, 1, 2) == std::vector<int64_t>{5, 5, 5});
  const auto r = rescale_sum_match({1, 10, 40, 13}, 5, 30);
  CHECK(r[0] + r[1] + r[2] + r[3] == 64);
  for (const int64_t v : r) CHECK((v >= 5 && v <= 30));
}

}  // namespace svqa
