#include "benchmarks/scoring/results_export.h"

#include <filesystem>
#include <stdexcept>

#include "benchmarks/datasets/ovobench.h"

namespace svqa {
namespace {

std::string id_text(const nlohmann::json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

// The prediction of `id`: its output, null for an error record, or nothing (no prediction).
std::optional<nlohmann::json> response_of(const std::map<std::string, const Prediction*>& by_id,
                                          const std::string& id, ExportCounts& counts) {
  const auto it = by_id.find(id);
  if (it == by_id.end()) {
    ++counts.missing;
    return std::nullopt;
  }
  if (!it->second->answered()) {
    ++counts.errored;
    return nlohmann::json(nullptr);
  }
  ++counts.written;
  return nlohmann::json(it->second->output);
}

// Every question object of a StreamingBench file with the id its loader gives it: "<video stem>_<k>",
// k counting the video's questions in file order (entries of one video may be several windows).
template <typename F>
void each_streamingbench_question(nlohmann::json& entries, std::map<std::string, size_t>& asked, F&& f) {
  for (auto& entry : entries) {
    if (entry.is_array()) {  // questions_sqa.json: a video is a list of windows
      each_streamingbench_question(entry, asked, f);
      continue;
    }
    if (!entry.is_object() || !entry.contains("video_path") || !entry["video_path"].is_string() ||
        !entry.contains("questions") || !entry["questions"].is_array())
      throw std::runtime_error("expected entries with video_path and questions");
    const std::string stem = std::filesystem::path(entry["video_path"].get<std::string>()).stem().string();
    for (auto& q : entry["questions"]) f(stem + "_" + std::to_string(asked[stem]++), q);
  }
}

}  // namespace

std::map<std::string, const Prediction*> predictions_by_id(const std::vector<Prediction>& records, ExportCounts& counts) {
  std::map<std::string, const Prediction*> out;
  std::map<std::string, std::pair<bool, bool>> repeated;  // id -> (repeated, some differ)
  for (const auto& r : records) {
    const Prediction*& slot = out[r.question_id];
    if (slot) {
      auto& [again, differ] = repeated[r.question_id];
      again = true;
      differ = differ || slot->output != r.output || slot->error.empty() != r.error.empty();
    }
    slot = &r;
  }
  for (const auto& [_, state] : repeated) counts.duplicates += state.first, counts.conflicting += state.second;
  return out;
}

nlohmann::json ovobench_results_file(const nlohmann::json& annotations,
                                     const std::map<std::string, const Prediction*>& by_id, ExportCounts& counts) {
  nlohmann::json out = {{"backward", nlohmann::json::array()}, {"realtime", nlohmann::json::array()},
                        {"forward", nlohmann::json::array()}};
  for (const auto& a : annotations) {
    const std::string group = a.is_object() && a.contains("task") && a["task"].is_string()
                                  ? ovobench_group(a["task"].get<std::string>())
                                  : "";
    if (group.empty() || !a.contains("id")) continue;  // the loader refuses these records
    const std::string id = id_text(a["id"]);
    if (group != "forward") {
      const auto response = response_of(by_id, id, counts);
      if (!response) continue;
      out[group].push_back({{"id", a["id"]},
                            {"video", a.value("video", "")},
                            {"task", a["task"]},
                            {"question", a.value("question", "")},
                            {"response", *response},
                            {"ground_truth", std::string(1, char('A' + a.value("gt", 0)))}});
      continue;
    }
    nlohmann::json record = a;
    bool any = false;
    for (size_t k = 0; k < record["test_info"].size(); ++k) {
      const auto response = response_of(by_id, id + "_" + std::to_string(k), counts);
      any = any || response.has_value();
      record["test_info"][k]["response"] = response.value_or(nlohmann::json(nullptr));
    }
    if (any) out["forward"].push_back(std::move(record));
  }
  return out;
}

nlohmann::json streamingbench_results_file(const nlohmann::json& annotations,
                                           const std::map<std::string, const Prediction*>& by_id,
                                           const std::string& model_key, ExportCounts& counts) {
  nlohmann::json out = annotations;
  std::map<std::string, size_t> asked;
  each_streamingbench_question(out, asked, [&](const std::string& id, nlohmann::json& q) {
    if (q.is_object() && q.contains("ground_truth_time_stamp")) {  // proactive: the dialog, as the official code writes it
      const auto response = response_of(by_id, id, counts);
      if (!response || response->is_null()) return;
      const Prediction& p = *by_id.at(id);
      // One without turns: no key, as for an error record; count.py reads history[-1].
      if (p.dialog_history.is_array() && !p.dialog_history.empty())
        q[model_key] = {{"answered", p.answered_at.is_null() ? nlohmann::json(false) : p.answered_at},
                        {"dialog_history", p.dialog_history}};
      return;
    }
    const auto response = response_of(by_id, id, counts);
    if (response && !response->is_null()) q[model_key] = *response;  // an error: no answer, as a skipped question
  });
  return out;
}

}  // namespace svqa
