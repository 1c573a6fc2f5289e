// strategies/retrieval/external/external on a tiny random SigLIP exported at test time (the CTest fixture
// `export_tiny_siglip`, see tests/CMakeLists.txt): a frame planted to match the question is the one
// retrieved, and another question retrieves another frame; only frames the bank holds are
// candidates; the same blocks at every layer, ascending; chunk_size averages consecutive frames.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <numeric>

#include "core/memory/memory_bank.h"
#include "models/image_text/image_text_model.h"
#include "strategies/retrieval/external/external.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_SIGLIP
#error "tests/CMakeLists.txt defines SVQA_TINY_SIGLIP, the tiny SigLIP export directory"
#endif

namespace svqa {
namespace {

using test::StubBackbone;
using test::tiny_siglip;

constexpr int64_t kLayers = 3;

MemoryBankOptions bank_options() { return test::cpu_bank(kLayers); }

KvBlock block_of_frames(int64_t first, int64_t last, Granularity g = Granularity::Frame) {
  return test::frame_block(kLayers, first, last, g);
}

// A stream of `frames` (uint8 [N, 32, 32, 3]), one unit of `per_unit` frames at a time, and one
// bank block per unit for the first `in_bank` units.
struct Stream {
  MemoryBank bank{bank_options()};
  Stream(ExternalRetrieval& strategy, const at::Tensor& frames, int64_t per_unit, int64_t in_bank_units) {
    strategy.begin_stream();
    for (int64_t first = 0, unit = 0; first < frames.size(0); first += per_unit, ++unit) {
      VisualUnit u;
      u.rgb = frames.narrow(0, first, std::min(per_unit, frames.size(0) - first));
      u.first_frame = first;
      u.last_frame = first + u.rgb.size(0) - 1;
      strategy.observe(u);
      if (unit < in_bank_units) bank.add(block_of_frames(u.first_frame, u.last_frame));
    }
  }
};

// Blocks for every layer; checks they are the same and ascending.
std::vector<int64_t> ask(ExternalRetrieval& strategy, const std::string& question, const MemoryBank& bank) {
  test::StubBackbone backbone;  // external retrieval never runs the backbone
  strategy.begin_question(backbone, QuestionInfo{"q", question, 0}, bank);
  const auto first = strategy.select(LayerQuery{0, {}, {}}, bank);
  CHECK(std::is_sorted(first.begin(), first.end()));
  for (int64_t l = 1; l < kLayers; ++l) CHECK(strategy.select(LayerQuery{l, {}, {}}, bank) == first);
  return first;
}

ExternalRetrievalOptions options(int64_t retrieve_size, int64_t chunk_size) {
  ExternalRetrievalOptions o;
  o.model = SVQA_TINY_SIGLIP;
  o.retrieve_size = retrieve_size;
  o.chunk_size = chunk_size;
  return o;
}

at::Tensor random_frames(int64_t n, uint64_t seed) { return test::random_frames(n, 32, 32, 1.0, seed).rgb; }

// Indices of the pool ordered by descending cosine with `question`.
std::vector<int64_t> ranked(const at::Tensor& pool, const std::string& question) {
  const auto scores = at::matmul(tiny_siglip()->embed_images(pool), tiny_siglip()->embed_text(question));
  const auto order = std::get<1>(scores.sort(0, /*descending=*/true));
  return {order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel()};
}

}  // namespace

TEST_CASE("a frame planted to match the question is retrieved, and only for that question",
          "[external][tiny_siglip]") {
  const auto pool = random_frames(300, 0);
  const std::string question_a = "what color is the car on the road", question_b = "where does the dog sit";
  const auto rank_a = ranked(pool, question_a), rank_b = ranked(pool, question_b);
  REQUIRE(rank_a[0] != rank_b[0]);  // the two questions have different best frames in the pool
  // 12 frames from the middle of both rankings, with each question's best frame planted.
  std::vector<int64_t> rows;
  for (int64_t r : rank_a)
    if (rows.size() < 12 && r != rank_a[0] && r != rank_b[0] && r != rank_a.back()) rows.push_back(r);
  rows[3] = rank_a[0];
  rows[8] = rank_b[0];
  const auto frames = pool.index_select(0, at::tensor(rows, at::kLong));

  ExternalRetrieval strategy(options(1, 1), tiny_siglip());
  Stream stream(strategy, frames, 1, 12);
  CHECK(ask(strategy, question_a, stream.bank) == std::vector<int64_t>{3});
  CHECK(strategy.selected_frames() == std::vector<int64_t>{3});
  CHECK(ask(strategy, question_b, stream.bank) == std::vector<int64_t>{8});

  SECTION("frames the bank does not hold yet are not candidates") {
    Stream partial(strategy, frames, 1, 6);  // every frame observed, frames 0-5 in the bank
    const auto blocks = ask(strategy, question_b, partial.bank);
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0] <= 5);
    CHECK(strategy.selected_frames()[0] <= 5);
    CHECK(ask(strategy, question_a, partial.bank) == std::vector<int64_t>{3});
  }
  SECTION("a new stream forgets the frames of the last one") {
    strategy.begin_stream();
    CHECK(ask(strategy, question_a, stream.bank).empty());
  }
}

TEST_CASE("the top retrieve_size frames by cosine, mapped to the blocks holding them", "[external][tiny_siglip]") {
  const auto frames = random_frames(10, 1);
  const std::string question = "a person opens the kitchen door";
  auto want = ranked(frames, question);
  want.resize(4);
  std::sort(want.begin(), want.end());

  ExternalRetrieval per_frame(options(4, 1), tiny_siglip());
  Stream stream(per_frame, frames, 1, 10);
  CHECK(ask(per_frame, question, stream.bank) == want);  // block i holds frame i

  // Units (and blocks) of two frames, as Qwen2.5-VL's temporal patches: block k holds frames 2k, 2k+1.
  ExternalRetrieval per_pair(options(4, 1), tiny_siglip());
  Stream pairs(per_pair, frames, 2, 5);
  CHECK(per_pair.selected_frames().empty());
  ask(per_pair, question, pairs.bank);
  CHECK(per_pair.selected_frames() == want);
  std::vector<int64_t> want_blocks;
  for (int64_t f : want) want_blocks.push_back(f / 2);
  want_blocks.erase(std::unique(want_blocks.begin(), want_blocks.end()), want_blocks.end());
  CHECK(ask(per_pair, question, pairs.bank) == want_blocks);

  ExternalRetrieval everything(options(64, 1), tiny_siglip());  // more than the stream: every frame
  Stream all(everything, frames, 1, 10);
  CHECK(ask(everything, question, all.bank).size() == 10);
}

TEST_CASE("chunk_size ranks groups of consecutive frames by their mean cosine", "[external][tiny_siglip]") {
  const auto pool = random_frames(100, 2);
  const std::string question = "a red ball on the table";
  const auto rank = ranked(pool, question);
  // Groups of two: (best, worst) has the highest maximum; (2nd, 3rd) the highest mean.
  const std::vector<int64_t> rows = {rank[0], rank.back(), rank[1], rank[2], rank[40], rank[41], rank[60], rank[61]};
  const auto frames = pool.index_select(0, at::tensor(rows, at::kLong));
  const auto cosine = at::matmul(tiny_siglip()->embed_images(frames), tiny_siglip()->embed_text(question));
  const auto means = cosine.view({4, 2}).mean(1);
  REQUIRE(means.argmax().item<int64_t>() == 1);
  REQUIRE(cosine.argmax().item<int64_t>() == 0);

  ExternalRetrieval by_frame(options(1, 1), tiny_siglip());
  Stream s1(by_frame, frames, 1, 8);
  CHECK(ask(by_frame, question, s1.bank) == std::vector<int64_t>{0});

  ExternalRetrieval by_pair(options(2, 2), tiny_siglip());
  Stream s2(by_pair, frames, 1, 8);
  CHECK(ask(by_pair, question, s2.bank) == std::vector<int64_t>{2, 3});

  // retrieve_size 3 with chunk_size 2: ceil(3/2) = 2 groups, the two best means.
  const auto top2 = std::get<1>(means.topk(2));
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t f : {2 * top2[i].item<int64_t>(), 2 * top2[i].item<int64_t>() + 1}) want.push_back(f);
  std::sort(want.begin(), want.end());
  ExternalRetrieval rounded_up(options(3, 2), tiny_siglip());
  Stream s3(rounded_up, frames, 1, 8);
  CHECK(ask(rounded_up, question, s3.bank) == want);
}

TEST_CASE("blocks covering frames: every block whose span holds a chosen frame", "[external]") {
  MemoryBank bank(bank_options());
  for (int64_t f = 0; f < 6; f += 2) bank.add(block_of_frames(f, f + 1));  // ids 0-2: frames 0-1, 2-3, 4-5
  bank.add(block_of_frames(0, 5, Granularity::Summary));                    // id 3: the whole span
  CHECK(blocks_covering_frames(bank, {3}) == std::vector<int64_t>{1, 3});
  CHECK(blocks_covering_frames(bank, {0, 5}) == std::vector<int64_t>{0, 2, 3});
  CHECK(blocks_covering_frames(bank, {7}).empty());
  CHECK(blocks_covering_frames(bank, {}).empty());
}

TEST_CASE("select before begin_question is a programming error", "[external][tiny_siglip]") {
  ExternalRetrieval strategy(options(4, 1), tiny_siglip());
  MemoryBank bank(bank_options());
  CHECK_THROWS_WITH(strategy.select(LayerQuery{}, bank), Catch::Contains("before begin_question"));
}

}  // namespace svqa

namespace svqa {

TEST_CASE("a chosen block a layer does not store (StreamKV compression) is left out of that layer only",
          "[external][tiny_siglip]") {
  const auto frames = random_frames(6, 3);
  ExternalRetrieval strategy(options(64, 1), tiny_siglip());
  strategy.begin_stream();
  MemoryBank bank{bank_options()};
  for (int64_t f = 0; f < 6; ++f) {
    VisualUnit u;
    u.rgb = frames.narrow(0, f, 1);
    u.first_frame = u.last_frame = f;
    strategy.observe(u);
    auto b = block_of_frames(f, f);
    if (f == 2) b.keys[1] = b.values[1] = at::Tensor();  // frame 2 kept in layer 0 only
    bank.add(b);
  }
  StubBackbone backbone;  // external retrieval never runs the backbone
  strategy.begin_question(backbone, QuestionInfo{"q", "anything", 0}, bank);
  CHECK(strategy.select(LayerQuery{0, {}, {}}, bank) == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(strategy.select(LayerQuery{1, {}, {}}, bank) == std::vector<int64_t>{0, 1, 3, 4, 5});
}

}  // namespace svqa
