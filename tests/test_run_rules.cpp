// The run's reference rules: which frames come before a question (stream.frames_before_question)
// and how long an answer may be by question kind.

#include <catch2/catch.hpp>

#include <limits>

#include "app/run/frame_rule.h"
#include "app/run/question_step.h"

namespace svqa {

TEST_CASE("exclusive: frames [0, int(t*fps)) as ReKV's float32 tensor gives them", "[run]") {
  CHECK(frames_before(10.0, 1.0) == 10);
  CHECK(frames_before(10.5, 1.0) == 10);
  CHECK(frames_before(9.0, 0.5) == 4);
  CHECK(frames_before(21.0, 0.5) == 10);
  CHECK(frames_before(0.0, 0.5) == 0);
  // torch.tensor([0, 9.99999999]) * 1.0 is 10.0 in float32: ReKV encodes 10 frames.
  CHECK(frames_before(9.99999999, 1.0) == 10);
  CHECK(frames_before(std::numeric_limits<double>::infinity(), 0.5) == std::numeric_limits<int64_t>::max());

  // Frame 10 of a 1-fps stream (at 10 s) is seen at t = 10 only under inclusive.
  CHECK_FALSE(frame_before_question(FrameRule::Exclusive, 1.0, 10, 10.0, 10.0));
  CHECK(frame_before_question(FrameRule::Exclusive, 1.0, 9, 9.0, 10.0));
  CHECK(frame_before_question(FrameRule::Inclusive, 1.0, 10, 10.0, 10.0));
  CHECK_FALSE(frame_before_question(FrameRule::Inclusive, 1.0, 11, 11.0, 10.0));
  CHECK(frame_rule_from_name("inclusive") == FrameRule::Inclusive);
  CHECK_THROWS_WITH(frame_rule_from_name("both"), Catch::Contains("exclusive or inclusive"));
}

TEST_CASE("exclusive under frame_times presented: every frame presented before t, by its time", "[run]") {
  const FrameRule rule = frame_rule_from_name("exclusive", FrameTimes::Presented);
  CHECK(rule == FrameRule::Before);
  // At 0.5 fps a question at 9 s sees the frame presented at 8 s (ReKV's int(9 * 0.5) = 4 frames do not).
  CHECK(frame_before_question(rule, 0.5, 4, 8.0, 9.0));
  CHECK_FALSE(frame_before_question(FrameRule::Exclusive, 0.5, 4, 8.0, 9.0));
  // Index 2 filled by a frame presented at 13 s (frames dropped before it): not before a question at 9 s.
  CHECK_FALSE(frame_before_question(rule, 0.5, 2, 13.0, 9.0));
  CHECK(frame_before_question(FrameRule::Exclusive, 0.5, 2, 13.0, 9.0));
  CHECK_FALSE(frame_before_question(rule, 1.0, 10, 10.0, 10.0));
  CHECK(frame_rule_from_name("exclusive", FrameTimes::Stride) == FrameRule::Exclusive);
  CHECK(frame_rule_from_name("inclusive", FrameTimes::Presented) == FrameRule::Inclusive);
}

TEST_CASE("answer length: ReKV's by question kind unless max_new_tokens is given", "[run]") {
  Question mc, stream_open, offline_open;
  mc.options = {"a", "b"};
  offline_open.offline = true;
  CHECK(answer_length(0, mc) == 16);
  CHECK(answer_length(0, stream_open) == 256);
  CHECK(answer_length(0, offline_open) == 1024);
  CHECK(answer_length(7, mc) == 7);
  CHECK(answer_length(7, offline_open) == 7);
}

}  // namespace svqa
