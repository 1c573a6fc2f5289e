#include "models/backbones/video_prompt.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace svqa {

VideoPromptIds video_prompt_ids(const Manifest& m, const Tokenizer& tok, const std::string& question) {
  const std::string& tpl = m.video_prompt;
  const size_t video = tpl.find("{video}");
  std::string after = tpl.substr(video + 7);
  const size_t q = after.find("{question}");
  after.replace(q, 10, question);
  return {tok.encode(tpl.substr(0, video)), tok.encode(after)};
}

VideoPromptIds frame_prompt_ids(const Manifest& m, const Tokenizer& tok, double seconds) {
  if (m.frame_prompt.empty())
    throw std::logic_error("frame_prompt_ids: " + m.dir + "/manifest.json has no chat.frame_prompt");
  char text[64];
  std::snprintf(text, sizeof text, "%.1f", seconds);
  std::string tpl = m.frame_prompt;
  tpl.replace(tpl.find("{seconds}"), 9, text);
  const size_t frame = tpl.find("{frame}");
  return {tok.encode(tpl.substr(0, frame)), tok.encode(tpl.substr(frame + 7))};
}

std::vector<double> temporal_patch_seconds(const std::vector<double>& frame_times, int64_t temporal_patch_size) {
  std::vector<double> out;
  const auto n = static_cast<int64_t>(frame_times.size());
  for (int64_t first = 0; first < n; first += temporal_patch_size) {
    const int64_t last = std::min(first + temporal_patch_size, n) - 1;
    out.push_back((frame_times[static_cast<size_t>(first)] + frame_times[static_cast<size_t>(last)]) / 2);
  }
  return out;
}

}  // namespace svqa
