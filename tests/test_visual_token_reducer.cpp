// The pre-LLM visual-token hook: a reducer's kept tokens, their positions (renumbered for 1-D RoPE,
// kept for mRoPE), and an encoder wrapped behind it receiving the reduced units.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/visual_token_reducer.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

// Keeps the tokens whose first feature is positive, each doubled (a merge changes embeddings).
class KeepPositive final : public VisualTokenReducer {
 public:
  void begin_stream() override { ++streams; }
  ReducedTokens reduce(const VisualUnit& unit) override {
    const auto rows = at::nonzero(unit.tokens.select(1, 0) > 0).flatten();
    return {rows, unit.tokens.index_select(0, rows) * 2};
  }
  int streams = 0;
};

// Returns rows out of order.
class Unordered final : public VisualTokenReducer {
 public:
  ReducedTokens reduce(const VisualUnit& unit) override {
    return {at::tensor({1, 0}, at::kLong), unit.tokens.narrow(0, 0, 2)};
  }
};

// Records what it is given; answers each call with a value of its own.
class RecordingEncoder final : public EncodingStrategy {
 public:
  void begin_stream(Backbone&, const std::vector<int64_t>& ids, MemoryBank&) override { sink_ids = ids; }
  void encode(Backbone&, const std::vector<VisualUnit>& units, MemoryBank&) override {
    seen.insert(seen.end(), units.begin(), units.end());
  }
  const SinkKv& sinks() const override { return sinks_; }
  int64_t next_position() const override { return 42; }
  const MemoryBank* prepare_for_question(Backbone&, const QuestionInfo& question, MemoryBank& bank) override {
    asked.push_back(question.id);
    return &bank;
  }
  void add_record_fields(nlohmann::json& extra) const override { extra["inner"] = true; }
  std::vector<int64_t> sink_ids;
  std::vector<VisualUnit> seen;
  std::vector<std::string> asked;

 private:
  SinkKv sinks_;
};

VisualUnit unit_of(const at::Tensor& tokens, const at::Tensor& positions) {
  VisualUnit u;
  u.tokens = tokens;
  u.positions = positions;
  return u;
}

}  // namespace

TEST_CASE("reduce_units: kept tokens, 1-D positions renumbered back to back, mRoPE positions kept", "[reducer]") {
  // Unit 0 keeps rows 0, 2, 3; unit 1 keeps rows 1, 4.
  const at::Tensor a = at::tensor({1.f, 0.f, -1.f, 0.f, 2.f, 0.f, 3.f, 0.f, -4.f, 0.f}).view({5, 2});
  const at::Tensor b = at::tensor({-1.f, 1.f, 5.f, 1.f, -2.f, 1.f, -3.f, 1.f, 6.f, 1.f}).view({5, 2});
  const auto line = [](int64_t first) { return at::arange(first, first + 5, at::kLong).unsqueeze(0).expand({3, 5}).clone(); };
  KeepPositive reducer;
  const auto flat = reduce_units(reducer, {unit_of(a, line(10)), unit_of(b, line(15))}, /*mrope=*/false);
  REQUIRE(flat.size() == 2);
  CHECK(at::equal(flat[0].tokens, at::tensor({2.f, 0.f, 4.f, 0.f, 6.f, 0.f}).view({3, 2})));
  CHECK(at::equal(flat[1].tokens, at::tensor({10.f, 2.f, 12.f, 2.f}).view({2, 2})));
  CHECK(at::equal(flat[0].positions, at::arange(10, 13, at::kLong).unsqueeze(0).expand({3, 3})));
  CHECK(at::equal(flat[1].positions, at::arange(13, 15, at::kLong).unsqueeze(0).expand({3, 2})));

  const at::Tensor grid = at::stack({at::full({5}, 7, at::kLong), at::arange(5, at::kLong), at::arange(5, at::kLong) * 10});
  const auto kept = reduce_units(reducer, {unit_of(a, grid)}, /*mrope=*/true);
  CHECK(at::equal(kept[0].positions, grid.index_select(1, at::tensor({0, 2, 3}, at::kLong))));

  Unordered bad;
  CHECK_THROWS_WITH(reduce_units(bad, {unit_of(a, line(0))}, false),
                    "visual token reducer: rows must ascend within [0, 5)");
}

TEST_CASE("ReducingEncoder: the inner encoder gets the reduced units and answers for itself", "[reducer]") {
  auto reducer = std::make_unique<KeepPositive>();
  auto inner = std::make_unique<RecordingEncoder>();
  KeepPositive& r = *reducer;
  RecordingEncoder& in = *inner;
  ReducingEncoder encoder(std::move(reducer), std::move(inner));
  test::StubBackbone backbone(1);  // 1-D positions: no mRoPE section
  MemoryBank bank(test::cpu_bank(1));
  encoder.begin_stream(backbone, {1, 2, 3}, bank);
  CHECK(r.streams == 1);
  CHECK(in.sink_ids == std::vector<int64_t>{1, 2, 3});
  const at::Tensor tokens = at::tensor({1.f, -1.f, 2.f, -2.f}).view({4, 1});
  encoder.encode(backbone, {unit_of(tokens, at::arange(3, 7, at::kLong).unsqueeze(0).expand({3, 4}).clone())}, bank);
  REQUIRE(in.seen.size() == 1);
  CHECK(at::equal(in.seen[0].tokens, at::tensor({2.f, 4.f}).view({2, 1})));
  CHECK(at::equal(in.seen[0].positions, at::arange(3, 5, at::kLong).unsqueeze(0).expand({3, 2})));
  // Every other call is the inner encoder's (EncoderWrapper), with nothing forwarded by ReducingEncoder.
  CHECK(encoder.next_position() == 42);
  CHECK(&encoder.sinks() == &in.sinks());
  CHECK(encoder.prepare_for_question(backbone, {"q1", "?", 1.0}, bank) == &bank);
  CHECK(in.asked == std::vector<std::string>{"q1"});
  nlohmann::json extra = nlohmann::json::object();
  encoder.add_record_fields(extra);
  CHECK(extra == nlohmann::json{{"inner", true}});
}

}  // namespace svqa
