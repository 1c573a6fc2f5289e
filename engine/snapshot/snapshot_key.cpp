#include "engine/snapshot/snapshot_key.h"

#include <cmath>

#include "core/io/checksum.h"
#include "engine/snapshot/video_identity.h"

namespace svqa {
namespace {

// Bumped whenever the log's meaning changes, so older snapshots miss instead of misleading.
constexpr int kSnapshotFormat = 3;  // 2: representatives per kv head; 3: declared runtime leaves, sampled video

// stream.* keys that only answering reads: a snapshot serves every value of them.
const char* const kAnswerOnlyStreamKeys[] = {"answer_prompt", "position_policy", "max_new_tokens", "record_logits",
                                             "ram_budget_mb", "spill_dir"};

std::string section_yaml(const ConfigNode& resolved, const char* section) {
  const ConfigNode* node = resolved.find(section);
  return node ? to_yaml(*node) : std::string();
}

// The declared leaves, a device by its kind: cuda:0 and cuda:1 compute alike.
nlohmann::json runtime_leaves(const nlohmann::json& declared) {
  nlohmann::json out = declared;
  if (out.contains("runtime.device")) {
    const std::string device = out["runtime.device"].get<std::string>();
    out["runtime.device"] = device.substr(0, device.find(':'));
  }
  return out;
}

}  // namespace

nlohmann::json snapshot_key_material(const ConfigNode& resolved, const nlohmann::json& declared,
                                     const nlohmann::json& backbone_identity, const Stream& stream,
                                     const std::vector<Question>& asked, const std::vector<int64_t>& sink_ids) {
  ConfigNode stream_section = resolved.find("stream") ? *resolved.find("stream") : ConfigNode::map({});
  for (const char* key : kAnswerOnlyStreamKeys) stream_section.erase(key);
  nlohmann::json questions = nlohmann::json::array();
  for (const Question& q : asked)
    questions.push_back({{"id", q.id}, {"time", std::isfinite(q.time) ? nlohmann::json(q.time) : nlohmann::json("end")},
                         {"offline", q.offline}, {"text", q.text}});
  return {{"format", kSnapshotFormat},
          {"export", backbone_identity},
          {"backbone", section_yaml(resolved, "backbone")},
          {"encoding", section_yaml(resolved, "encoding")},
          {"stream", to_yaml(stream_section)},
          {"runtime", runtime_leaves(declared)},
          {"source", video_identity(stream.video)},
          {"source_fps", stream.source_fps},
          {"stream_id", stream.id},
          {"sink_ids", sink_ids},
          {"questions", questions}};
}

std::string snapshot_key(const nlohmann::json& material) {
  const std::string text = material.dump();
  return hex64(checksum64(text.data(), text.size()));
}

}  // namespace svqa
