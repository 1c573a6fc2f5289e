#include "benchmarks/scoring/ovobench_results.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace svqa {
namespace {

const char* const kGroups[] = {"backward", "realtime", "forward"};

std::string id_text(const nlohmann::json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

std::string response_text(const nlohmann::json& entry, const std::string& at) {
  if (!entry.contains("response")) throw std::runtime_error(at + ".response: missing (the model's text, or null)");
  const auto& r = entry["response"];
  if (r.is_null()) return "";
  if (!r.is_string()) throw std::runtime_error(at + ".response: expected a string or null, got " + r.dump());
  return r.get<std::string>();
}

Prediction record(const std::string& id, const std::string& output) {
  Prediction p;
  p.question_id = id;
  p.output = output;
  return p;
}

}  // namespace

bool is_ovobench_results(const nlohmann::json& j) {
  return j.is_object() && std::all_of(std::begin(kGroups), std::end(kGroups), [&](const char* g) {
           return j.contains(g) && j[g].is_array();
         });
}

std::vector<Prediction> ovobench_results_records(const nlohmann::json& results, const std::string& where) {
  if (!is_ovobench_results(results))
    throw std::runtime_error(where + ": expected OVO-Bench's results object {\"backward\": [...], \"realtime\": [...], "
                                     "\"forward\": [...]}");
  std::vector<Prediction> out;
  for (const char* group : kGroups)
    for (size_t i = 0; i < results[group].size(); ++i) {
      const auto& e = results[group][i];
      const std::string at = where + ": " + group + "[" + std::to_string(i) + "]";
      if (!e.is_object() || !e.contains("id") || !(e["id"].is_string() || e["id"].is_number_integer()))
        throw std::runtime_error(at + ".id: expected an object with an integer or string id");
      const std::string id = id_text(e["id"]);
      if (std::string(group) != "forward") {
        out.push_back(record(id, response_text(e, at)));
        continue;
      }
      if (!e.contains("test_info") || !e["test_info"].is_array())
        throw std::runtime_error(at + ".test_info: expected the list of probes");
      for (size_t k = 0; k < e["test_info"].size(); ++k)
        out.push_back(record(id + "_" + std::to_string(k),
                             response_text(e["test_info"][k], at + ".test_info[" + std::to_string(k) + "]")));
    }
  return out;
}

nlohmann::json read_ovobench_results(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw std::runtime_error(path + ": no .json results files in this directory");
  } else {
    files.push_back(path);
  }
  nlohmann::json merged = {{"backward", nlohmann::json::array()}, {"realtime", nlohmann::json::array()},
                           {"forward", nlohmann::json::array()}};
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw std::runtime_error(f.string() + ": cannot be read");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(f.string() + ": not JSON: " + e.what());
    }
    if (!is_ovobench_results(j))
      throw std::runtime_error(f.string() + ": expected {\"backward\": [...], \"realtime\": [...], \"forward\": [...]}");
    for (const char* g : kGroups)
      for (auto& e : j[g]) merged[g].push_back(std::move(e));
  }
  return merged;
}

}  // namespace svqa
