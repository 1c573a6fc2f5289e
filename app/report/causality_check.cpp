#include "app/report/causality_check.h"

#include <algorithm>
#include <sstream>

#include "core/io/format.h"

namespace svqa {

FramesAfterQuestion frames_after_question(const std::vector<PredictionRecord>& records) {
  FramesAfterQuestion out;
  for (const auto& rec : records) {
    if (!rec.answered()) continue;
    ++out.answered;
    if (!(rec.future_s > 0)) continue;  // a NaN from a hostile record is not a lead
    if (out.records++ == 0) out.first = fmt::format("{}/{} at {:g} s", rec.stream, rec.question_id, rec.time.value_or(0));
    out.max_s = std::max(out.max_s, rec.future_s);
  }
  return out;
}

std::string frames_after_question_line(const RunSummary& run) {
  const FramesAfterQuestion& f = run.frames_after_question;
  if (f.records == 0) return "";
  return fmt::format("{}: {} of {} answered questions used frames presented after the question (up to {:.3f} s; "
                     "first {})",
                     run.name, f.records, f.answered, f.max_s, f.first);
}

std::string frames_after_question_md(const std::vector<RunSummary>& runs) {
  std::ostringstream s;
  for (const auto& r : runs) {
    const std::string line = frames_after_question_line(r);
    if (line.empty()) continue;
    if (s.tellp() == 0)
      s << "\n## Frames presented after the question\n\nThese runs answered questions from frames shown after the "
           "question was asked (the records' future_s, from the frames' presentation times): stream.frame_times "
           "stride stamps frame i at i / avg_fps, early on variable-rate and 29.97-fps files. Their answers saw the "
           "future; frame_times presented keeps the past only (docs/video_input.md).\n\n";
    s << "- " << line << "\n";
  }
  return s.str();
}

}  // namespace svqa
