#include "app/report/run_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/config/experiment.h"
#include "engine/benchmark.h"
#include "app/report/causality_check.h"
#include "app/run/prediction_record.h"

namespace fs = std::filesystem;

namespace svqa {
namespace {

bool is_run_dir(const fs::path& p) { return fs::is_regular_file(p / "config.yaml") && fs::is_regular_file(p / "predictions.jsonl"); }

// Empty where nothing was measured, or where the sum left the doubles (no figure can draw it).
std::optional<double> mean(double sum, int64_t n) {
  return n && std::isfinite(sum) ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
}

// A grid run's settings from its name ("<experiment>__key=value__label"), the `label` axis left out.
std::vector<std::pair<std::string, std::string>> name_settings(const std::string& name) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t at = name.find("__"); at != std::string::npos;) {
    const size_t next = name.find("__", at + 2);
    const std::string part = name.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2);
    const size_t eq = part.find('=');
    if (eq == std::string::npos) out.push_back({"", part});
    else if (part.substr(0, eq) != "label") out.push_back({part.substr(0, eq), part.substr(eq + 1)});
    at = next;
  }
  return out;
}

// The run's position in its grid: grid.json beside it (written by `svqa grid`) lists the runs in order.
size_t grid_position(const std::string& dir, const std::string& name) {
  const fs::path listing = fs::path(dir).parent_path() / "grid.json";
  if (!fs::is_regular_file(listing)) return std::numeric_limits<size_t>::max();
  std::ifstream in(listing);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_object() && j.contains("runs") && j["runs"].is_array())
    for (size_t i = 0; i < j["runs"].size(); ++i)
      if (j["runs"][i] == name) return i;
  return std::numeric_limits<size_t>::max();
}

// The backbone in a caption: its export folder's name ("tiny-llava_onevision"), else its type.
std::string backbone_name(const ExperimentConfig& cfg) {
  const ConfigNode* options = cfg.resolved.find("backbone") ? cfg.resolved.find("backbone")->find("options") : nullptr;
  const ConfigNode* dir = options ? options->find("export") : nullptr;
  if (dir && dir->is_scalar() && !dir->scalar.empty()) return fs::path(dir->scalar).lexically_normal().filename().string();
  const ComponentChoice* backbone = cfg.component("backbone");
  return backbone ? backbone->type : "";
}

// The options that bound what a method retrieves or holds, as its config states them
// ("retrieve_size=8", MuKV's "blocks=2+4+2", fresh frames' "frames=8", HERMES's "budget=60").
std::string budget_text(const ConfigNode& resolved) {
  static const std::pair<const char*, const char*> kBudgetKeys[] = {
      {"retrieval", "retrieve_size"}, {"retrieval", "blocks"}, {"encoding", "budget"}, {"encoding", "frames"}};
  std::string out;
  for (const auto& [section, key] : kBudgetKeys) {
    const ConfigNode* node = resolved.find(section);
    node = node ? node->find("options") : nullptr;
    node = node ? node->find(key) : nullptr;
    if (!node) continue;
    std::string value = node->scalar;
    if (node->is_map())
      for (const auto& e : node->entries) value += (value.empty() ? "" : "+") + e.value.scalar;
    if (!value.empty()) out += (out.empty() ? "" : ", ") + std::string(key) + "=" + value;
  }
  return out;
}

// The measurements of one run: per-question timings (warm-up left out), memory, retrieval.
void add_measurements(RunSummary& r, const std::vector<PredictionRecord>& records) {
  double memory = 0, inference = 0, gb_per_hour = 0;
  int64_t answered = 0, with_time = 0;
  std::vector<double> ttft, fps;
  std::map<std::string, int64_t> questions_of_stream, seen_of_stream;
  for (const auto& rec : records)
    if (rec.answered() && rec.timing) ++questions_of_stream[rec.stream];
  for (const auto& rec : records) {
    ++r.records;
    if (!rec.answered()) {
      ++r.errored;
      continue;
    }
    if (!rec.memory || !rec.timing) continue;  // not svqa's own record
    ++answered;
    // Tokens held per layer: a block kept in some layers only (StreamKV) counts for those.
    const auto layers = static_cast<double>(rec.context_tokens.size());
    memory += rec.memory->layer_tokens > 0 && layers > 0 ? static_cast<double>(rec.memory->layer_tokens) / layers
                                                         : static_cast<double>(rec.memory->tokens);
    double sum = 0;
    for (const int64_t c : rec.context_tokens) sum += static_cast<double>(c);
    inference += rec.context_tokens.empty() ? 0.0 : sum / layers;
    const RecordTiming& t = *rec.timing;
    r.max_load = std::max(r.max_load, t.load_1m);
    r.cpus = std::max(r.cpus, t.cpus);
    // The first question of a stream pays the warm-up (first forward passes, allocations): left out
    // of the timings where the stream has more.
    const bool warm_up = seen_of_stream[rec.stream]++ == 0 && questions_of_stream[rec.stream] > 1;
    const bool timed = !warm_up && std::isfinite(t.ttft_s);
    if (rec.time && *rec.time > 0 && std::isfinite(*rec.time)) {
      // Each count as a double before adding: two int64 byte counts near their limit overflow. A
      // time near zero makes the rate infinite: not a measurement, left out.
      const double gb_rate = (static_cast<double>(rec.memory->ram_bytes) + static_cast<double>(rec.memory->disk_bytes)) /
                          1e9 / (*rec.time / 3600);
      if (std::isfinite(gb_rate)) gb_per_hour += gb_rate, ++with_time;
      if (timed) r.ttft_by_time.push_back({*rec.time, t.ttft_s});
      for (const auto& layer : rec.retrieved)
        for (const int64_t id : layer)
          if (const auto span = rec.block_spans.find(id); span != rec.block_spans.end())
            r.retrieved_age.push_back(std::clamp((*rec.time - span->second.second) / *rec.time, 0.0, 1.0));
    }
    if (timed) ttft.push_back(t.ttft_s);
    const double frame_rate = t.encode_s > 0 && t.encode_frames > 0 ? static_cast<double>(t.encode_frames) / t.encode_s : 0;
    if (!warm_up && frame_rate > 0 && std::isfinite(frame_rate)) fps.push_back(frame_rate);
    if (!rec.retrieval_scores.empty())
      r.traces.push_back({rec.stream, rec.question_id, rec.time.value_or(0), rec.retrieval_scores});
  }
  r.memory_tokens = mean(memory, answered);
  r.inference_tokens = mean(inference, answered);
  r.memory_gb_per_hour = mean(gb_per_hour, with_time);
  r.ttft_s = spread_of(ttft);
  r.encode_fps = spread_of(fps);
}

// Open-ended answers are judged by `svqa run` (network, cache); the report takes its verdicts.
void add_judgments(RunSummary& r) {
  if (!fs::is_regular_file(r.dir + "/scores.json")) return;
  std::ifstream in(r.dir + "/scores.json");
  const auto scores = nlohmann::json::parse(in, nullptr, false);
  const auto judge = nlohmann::json::json_pointer("/open_ended/judge");
  if (!scores.is_object() || !scores.contains(judge) || !scores[judge].is_object()) return;
  const auto& j = scores[judge];
  if (j.contains("accuracy") && j["accuracy"].is_number()) r.judge_accuracy = j["accuracy"].get<double>();
  if (j.contains("score") && j["score"].is_number()) r.judge_score = j["score"].get<double>();
  r.judge_failed = j.value("failed", int64_t{0});
}

}  // namespace

std::optional<Spread> spread_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return Spread{median, values.front(), values.back(), static_cast<int64_t>(n)};
}

std::vector<std::string> find_run_dirs(const std::vector<std::string>& roots) {
  std::set<std::string> dirs;
  for (const auto& root : roots) {
    if (!fs::exists(root)) throw std::runtime_error(root + ": no such directory");
    const size_t before = dirs.size();
    if (is_run_dir(root)) dirs.insert(fs::path(root).lexically_normal().string());
    else
      for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_directory() && is_run_dir(e.path())) dirs.insert(e.path().lexically_normal().string());
    if (dirs.size() == before)
      throw std::runtime_error(root + ": no run results here (a run directory holds config.yaml and predictions.jsonl)");
  }
  return {dirs.begin(), dirs.end()};
}

RunSummary summarize_run(const std::string& dir, const Registries& registries) {
  RunSummary r;
  r.dir = dir;
  r.name = fs::path(dir).filename().string();
  try {
    const ExperimentConfig cfg = resolve_experiment(dir + "/config.yaml", {}, registries.sections());
    r.name = cfg.header.name;
    r.settings = name_settings(r.name);
    r.grid_position = grid_position(dir, r.name);
    const ComponentChoice* encoding = cfg.component("encoding");
    const ComponentChoice* retrieval = cfg.component("retrieval");
    const ComponentChoice* benchmark = cfg.component("benchmark");
    if (!benchmark) throw std::runtime_error("config.yaml has no benchmark section");
    r.method = (encoding ? encoding->type : "?") + " + " + (retrieval ? retrieval->type : "?");
    r.label = cfg.header.label.empty() ? r.method : cfg.header.label;
    r.benchmark = benchmark->type;
    r.backbone = backbone_name(cfg);
    r.budget = budget_text(cfg.resolved);
    r.expected = cfg.expected;
    auto loaded = registries.benchmark.create(benchmark->type, benchmark->options);
    const std::vector<Stream> streams = loaded->streams();
    const auto records = read_prediction_records(dir + "/predictions.jsonl");
    r.scores = score_predictions(r.benchmark, loaded->answer_rule(), streams, scored_predictions(records));
    add_measurements(r, records);
    r.frames_after_question = frames_after_question(records);
    add_judgments(r);
  } catch (const std::exception& e) {
    r.problem = e.what();
  }
  return r;
}

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      const size_t za = na.find_first_not_of('0'), zb = nb.find_first_not_of('0');
      const std::string ta = za == std::string::npos ? "" : na.substr(za), tb = zb == std::string::npos ? "" : nb.substr(zb);
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ei, j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

void order_runs(std::vector<RunSummary>& runs) {
  // A grid's runs sort together, by position; its first run's directory places the grid among the rest.
  auto grid_of = [](const RunSummary& r) {
    return r.grid_position == std::numeric_limits<size_t>::max() ? r.dir : fs::path(r.dir).parent_path().string();
  };
  std::stable_sort(runs.begin(), runs.end(), [&](const RunSummary& a, const RunSummary& b) {
    const std::string ga = grid_of(a), gb = grid_of(b);
    if (ga != gb) return natural_less(ga, gb);
    if (a.grid_position != b.grid_position) return a.grid_position < b.grid_position;
    return natural_less(a.name, b.name);
  });
}

void distinct_names(std::vector<RunSummary>& runs) {
  std::map<std::string, int> count;
  for (const auto& r : runs) ++count[r.name];
  for (auto& r : runs)
    if (count[r.name] > 1) r.name += " (" + r.dir + ")";
  // A row is its label and settings: where both match, the run's name (now distinct) tells them apart.
  std::map<std::pair<std::string, std::string>, int> rows;
  for (const auto& r : runs)
    if (r.problem.empty()) ++rows[{r.label, settings_text(r)}];
  for (auto& r : runs)
    if (r.problem.empty() && rows[{r.label, settings_text(r)}] > 1) r.label += " (" + r.name + ")";
}

std::string settings_text(const RunSummary& r) {
  std::string out;
  for (const auto& [key, value] : r.settings) out += (out.empty() ? "" : ", ") + (key.empty() ? value : key + "=" + value);
  return out;
}

}  // namespace svqa
