// MuKV's dual-signal compression against a transcription of the reference implementation
// (tests/python/mukv_dcp_reference.py): identical kept indices on 50 random blocks per granularity,
// over every attention-layer choice, both frequency scores, each importance and dedup.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/nn/attention.h"
#include "models/video/npy.h"
#include "strategies/encoding/mukv/mukv_compression.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

// Keys in clusters (near-duplicates) for dedup to find, or independent.
at::Tensor random_keys(int64_t n, bool clustered) {
  if (!clustered) return at::randn({n, 2, 16});
  const auto centers = at::randn({std::max<int64_t>(2, n / 6), 2, 16});
  return centers.index_select(0, at::randint(0, centers.size(0), {n})) + 0.15 * at::randn({n, 2, 16});
}

}  // namespace

TEST_CASE("attention layer choices follow the reference", "[mukv]") {
  using P = std::vector<std::pair<int64_t, double>>;
  CHECK(attention_layer_weights(AttentionLayers::Last, 24) == P{{23, 1.0}});
  CHECK(attention_layer_weights(AttentionLayers::SecondLast, 24) == P{{22, 1.0}});
  CHECK(attention_layer_weights(AttentionLayers::Middle, 24) == P{{12, 1.0}});
  CHECK(attention_layer_weights(AttentionLayers::Last5, 24) == P{{19, 0.1}, {20, 0.15}, {21, 0.2}, {22, 0.25}, {23, 0.3}});
  CHECK(attention_layer_weights(AttentionLayers::Last5, 3) == P{{0, 0.2}, {1, 0.25}, {2, 0.3}});
  CHECK(kept_count(49, 0.1) == 4);
  CHECK(kept_count(196, 0.1) == 19);
  CHECK(kept_count(784, 0.8) == 627);
  CHECK(kept_count(49, 0.01) == 1);  // the reference would keep all 49 (its fallback for an empty selection)
}

TEST_CASE("MuKV compression keeps the tokens the reference formulas keep", "[mukv]") {
  at::InferenceMode inference;
  at::set_num_threads(1);  // small tensors: worker threads would only spin
  at::manual_seed(0);
  const std::string dir = test::temp_dir("mukv_dcp");
  std::filesystem::create_directories(dir);
  const int64_t n_init = 3, heads = 2, dq = 4, layers = 5;
  const std::vector<int64_t> sizes{49, 196, 784};
  const std::vector<double> alphas{0.5, 0.7, 0.8}, paper_ratios{0.1, 0.1, 0.8};
  const std::vector<std::string> layer_names{"last", "second_last", "middle", "last_5"};
  nlohmann::json cases = nlohmann::json::array();
  std::vector<at::Tensor> ours;
  int64_t deduped = 0;  // cases where dedup removed a candidate
  for (size_t g = 0; g < sizes.size(); ++g) {
    const int64_t n = sizes[g];
    for (int c = 0; c < 50; ++c) {
      const size_t i = ours.size();
      DcpSettings s;
      s.importance = c % 10 == 8 ? Importance::Attention : c % 10 == 9 ? Importance::Frequency : Importance::Fused;
      s.frequency = c % 3 == 2 ? FrequencyScore::Diff : FrequencyScore::Fft;
      s.alpha = alphas[g];
      s.keep_ratio = c < 25 ? paper_ratios[g] : 0.05 + 0.95 * at::rand({1}).item<double>();
      s.dedup = c % 4 == 1;
      s.dedup_threshold = c % 8 == 1 ? 0.9 : 0.6;
      const std::string layer_name = layer_names[static_cast<size_t>(c / 2 % 4)];

      nlohmann::json q_files = nlohmann::json::array(), k_files = nlohmann::json::array();
      std::vector<at::Tensor> probs;
      for (int64_t l = 0; l < layers; ++l) {
        const auto q = 2 * at::randn({n, heads, dq}), k = 2 * at::randn({n_init + n, heads, dq});
        probs.push_back(attend(q, k, at::zeros_like(k), AttentionMask{}, true).probs);
        const std::string qf = "q_" + std::to_string(i) + "_" + std::to_string(l) + ".npy";
        const std::string kf = "k_" + std::to_string(i) + "_" + std::to_string(l) + ".npy";
        write_npy(dir + "/" + qf, q);
        write_npy(dir + "/" + kf, k);
        q_files.push_back(qf);
        k_files.push_back(kf);
      }
      const auto keys = random_keys(n, s.dedup);
      const std::string keys_file = "keys_" + std::to_string(i) + ".npy";
      write_npy(dir + "/" + keys_file, keys);

      std::vector<at::Tensor> chosen;
      std::vector<double> weights;
      for (const auto& [layer, w] : attention_layer_weights(attention_layers_from_name(layer_name), layers))
        chosen.push_back(probs[static_cast<size_t>(layer)]), weights.push_back(w);
      const auto importance = token_importance(attention_importance(chosen, weights, n_init), keys, s);
      ours.push_back(select_tokens(importance, keys, s));
      const int64_t kappa = kept_count(n, s.keep_ratio);
      if (s.dedup && ours.back().size(0) < kappa) ++deduped;
      if (!s.dedup) CHECK(ours.back().size(0) == kappa);

      const char* importance_name[] = {"fused", "attention", "frequency"};
      cases.push_back({{"n_init", n_init}, {"q", q_files}, {"k", k_files}, {"keys", keys_file},
                       {"importance", importance_name[static_cast<int>(s.importance)]},
                       {"frequency", s.frequency == FrequencyScore::Fft ? "fft" : "diff"}, {"alpha", s.alpha},
                       {"keep_ratio", s.keep_ratio}, {"dedup", s.dedup}, {"dedup_threshold", s.dedup_threshold},
                       {"attention_layer", layer_name}});
    }
  }
  std::ofstream(dir + "/cases.json") << cases.dump();
  REQUIRE(test::run_python("mukv_dcp_reference.py", dir));
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO("case " << i << ": " << cases[i].dump());
    const auto expected = read_npy(dir + "/" + ("expected_" + std::to_string(i) + ".npy"));
    REQUIRE(expected.sizes() == ours[i].sizes());
    CHECK(at::equal(expected, ours[i]));
  }
  CHECK(deduped >= 10);  // dedup really removed near-duplicates in many cases
}

}  // namespace svqa
