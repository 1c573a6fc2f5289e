#include "core/report/run_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/run/prediction_record.h"
#include "core/engine/benchmark.h"
#include "core/config/experiment.h"
#include "core/io/format.h"
#include "core/report/line_plot.h"

namespace fs = std::filesystem;

namespace svqa {
namespace {

bool is_run_dir(const fs::path& p) { return fs::is_regular_file(p / "config.yaml") && fs::is_regular_file(p / "predictions.jsonl"); }

std::optional<double> mean(double sum, int64_t n) { return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt; }

std::string number(std::optional<double> v, int digits) { return v ? fmt::format("{:.{}f}", *v, digits) : ""; }

std::string percent(std::optional<double> v) { return v ? number(*v * 100, 1) : ""; }

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (const char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string md_cell(std::string v) {
  for (size_t i = 0; (i = v.find('|', i)) != std::string::npos; i += 2) v.replace(i, 1, "\\|");
  return v;
}

// Benchmarks in first-seen order with their runs.
std::vector<std::pair<std::string, std::vector<const RunSummary*>>> by_benchmark(const std::vector<RunSummary>& runs) {
  std::vector<std::pair<std::string, std::vector<const RunSummary*>>> out;
  for (const auto& r : runs) {
    if (!r.problem.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& b) { return b.first == r.benchmark; });
    if (it == out.end()) it = out.insert(out.end(), {r.benchmark, {}});
    it->second.push_back(&r);
  }
  return out;
}

// Category columns of one benchmark: the first run's order (the official table's), then others.
std::vector<std::string> category_columns(const std::vector<const RunSummary*>& runs) {
  std::vector<std::string> cols;
  for (const auto* r : runs)
    for (const auto& [name, _] : r->scores.categories)
      if (std::find(cols.begin(), cols.end(), name) == cols.end()) cols.push_back(name);
  return cols;
}

const Tally* category_tally(const RunSummary& r, const std::string& name) {
  for (const auto& [n, t] : r.scores.categories)
    if (n == name) return &t;
  return nullptr;
}

// A grid run's settings ("retrieval=internal, n_local=40"), the part that tells runs apart.
std::string run_label(const std::string& name) {
  const size_t first = name.find("__");
  if (first == std::string::npos) return name;
  std::string label = name.substr(first + 2);
  for (size_t i = 0; (i = label.find("__", i)) != std::string::npos;) label.replace(i, 2, ", ");
  return label;
}

// Each run's name in a legend: its settings where those tell it from every other run, else its full name.
std::map<const RunSummary*, std::string> legend_names(const std::vector<RunSummary>& runs) {
  std::map<std::string, int> count;
  for (const auto& r : runs) ++count[run_label(r.name)];
  std::map<const RunSummary*, std::string> out;
  for (const auto& r : runs) out[&r] = count[run_label(r.name)] > 1 ? r.name : run_label(r.name);
  return out;
}

}  // namespace

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
    const ComponentChoice* encoding = cfg.component("encoding");
    const ComponentChoice* retrieval = cfg.component("retrieval");
    const ComponentChoice* benchmark = cfg.component("benchmark");
    if (!benchmark) throw std::runtime_error("config.yaml has no benchmark section");
    r.method = (encoding ? encoding->type : "?") + " + " + (retrieval ? retrieval->type : "?");
    r.benchmark = benchmark->type;
    auto loaded = registries.benchmark.create(benchmark->type, benchmark->options);
    const std::vector<Stream> streams = loaded->streams();
    const auto records = read_prediction_records(dir + "/predictions.jsonl");
    r.scores = score_predictions(r.benchmark, loaded->answer_rule(), streams, scored_predictions(records));

    double memory = 0, inference = 0, ttft = 0, encode_s = 0, encode_frames = 0;
    int64_t answered = 0;
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
      inference += rec.context_tokens.empty() ? 0.0 : sum / static_cast<double>(rec.context_tokens.size());
      ttft += rec.timing->ttft_s;
      encode_s += rec.timing->encode_s;
      encode_frames += static_cast<double>(rec.timing->encode_frames);
      if (!rec.retrieval_scores.empty())
        r.traces.push_back({rec.stream, rec.question_id, rec.time.value_or(0), rec.retrieval_scores});
    }
    r.memory_tokens = mean(memory, answered);
    r.inference_tokens = mean(inference, answered);
    r.ttft_s = mean(ttft, answered);
    if (encode_s > 0) r.encode_fps = encode_frames / encode_s;

    // Open-ended answers are judged by `svqa run` (network, cache); the report takes its verdicts.
    if (fs::is_regular_file(dir + "/scores.json")) {
      std::ifstream in(dir + "/scores.json");
      const auto scores = nlohmann::json::parse(in, nullptr, false);
      const auto judge = nlohmann::json::json_pointer("/open_ended/judge");
      if (scores.is_object() && scores.contains(judge) && scores[judge].is_object()) {
        const auto& j = scores[judge];
        if (j.contains("accuracy") && j["accuracy"].is_number()) r.judge_accuracy = j["accuracy"].get<double>();
        if (j.contains("score") && j["score"].is_number()) r.judge_score = j["score"].get<double>();
        r.judge_failed = j.value("failed", int64_t{0});
      }
    }
  } catch (const std::exception& e) {
    r.problem = e.what();
  }
  return r;
}

void distinct_names(std::vector<RunSummary>& runs) {
  std::map<std::string, int> count;
  for (const auto& r : runs) ++count[r.name];
  for (auto& r : runs)
    if (count[r.name] > 1) r.name += " (" + r.dir + ")";
}

std::string report_markdown(const std::vector<RunSummary>& runs) {
  std::ostringstream s;
  s << "# Results\n\n";
  for (const auto& [benchmark, group] : by_benchmark(runs)) {
    const auto categories = category_columns(group);
    bool open_ended = false, recall = false, macro = false;
    for (const auto* r : group) {
      open_ended = open_ended || r->scores.open_ended > 0;
      recall = recall || r->scores.recall.with_evidence > 0;
      macro = macro || r->scores.macro_accuracy.has_value();
    }
    s << "## " << benchmark << "\n\n| run | method | questions | answered | errored | accuracy %";
    if (macro) s << " | M-Avg %";
    for (const auto& c : categories) s << " | " << md_cell(c) << " %";
    if (open_ended) s << " | judge acc % | judge score | judge failed";
    if (recall) s << " | recall %";
    s << " | memory tokens | inference tokens | encode fps | TTFT s |\n|---|---|";
    const size_t numeric = 4 + macro + categories.size() + (open_ended ? 3 : 0) + recall + 4;
    for (size_t i = 0; i < numeric; ++i) s << "---:|";
    s << "\n";
    for (const auto* r : group) {
      const Tally& o = r->scores.overall;
      const int64_t questions = o.questions + r->scores.open_ended;
      s << "| " << md_cell(r->name) << " | " << md_cell(r->method) << " | " << questions << " | "
        << r->records - r->errored << " | " << r->errored << " | " << percent(o.accuracy());
      if (macro) s << " | " << percent(r->scores.macro_accuracy);
      for (const auto& c : categories) {
        const Tally* t = category_tally(*r, c);
        s << " | " << (t ? percent(t->accuracy()) : "");
      }
      if (open_ended) s << " | " << percent(r->judge_accuracy) << " | " << number(r->judge_score, 2) << " | " << r->judge_failed;
      if (recall) s << " | " << percent(r->scores.recall.recall());
      s << " | " << number(r->memory_tokens, 0) << " | " << number(r->inference_tokens, 0) << " | "
        << number(r->encode_fps, 2) << " | " << number(r->ttft_s, 3) << " |\n";
    }
    s << "\n";
  }
  s << "Accuracy: correct / (correct + wrong) by the benchmark's rule; questions not yet answered, errored or "
       "unparseable are left out and counted in the CSV. Memory tokens: K/V tokens held when a question is asked; "
       "inference tokens: tokens attended while answering (sinks + retrieved, mean over layers); TTFT: retrieval + "
       "prompt prefill; all means over answered questions.\n";
  bool problems = false;
  for (const auto& r : runs)
    if (!r.problem.empty()) {
      if (!problems) s << "\n## Runs not summarised\n\n";
      problems = true;
      s << "- " << r.dir << ": " << r.problem << "\n";
    }
  return s.str();
}

std::string report_csv(const std::vector<RunSummary>& runs) {
  std::ostringstream s;
  s << "run,method,benchmark,category,questions,scored,correct,wrong,unanswered,missing,errored,accuracy,"
       "judge_accuracy,judge_score,judge_failed,retrieval_recall,memory_tokens,inference_tokens,encode_fps,ttft_s,dir\n";
  for (const auto& [benchmark, group] : by_benchmark(runs))
    for (const auto* r : group) {
      auto row = [&](const std::string& category, const Tally* t, std::optional<double> accuracy) {
        s << csv_field(r->name) << "," << csv_field(r->method) << "," << benchmark << "," << csv_field(category) << ",";
        if (t)
          s << t->questions << "," << t->scored() << "," << t->correct << "," << t->wrong << "," << t->unanswered << ","
            << t->missing << "," << t->errored << ",";
        else
          s << ",,,,,,,";
        s << number(accuracy, 6) << ",";
        const bool overall = category == "overall";
        if (overall)
          s << number(r->judge_accuracy, 6) << "," << number(r->judge_score, 4) << "," << r->judge_failed << ","
            << number(r->scores.recall.recall(), 6) << "," << number(r->memory_tokens, 1) << ","
            << number(r->inference_tokens, 1) << "," << number(r->encode_fps, 3) << "," << number(r->ttft_s, 4);
        else
          s << ",,,,,,,";
        s << "," << csv_field(r->dir) << "\n";
      };
      row("overall", &r->scores.overall, r->scores.overall.accuracy());
      if (r->scores.macro_accuracy) row("M-Avg", nullptr, r->scores.macro_accuracy);
      for (const auto& [name, t] : r->scores.categories) row(name, &t, t.accuracy());
    }
  return s.str();
}

std::vector<std::string> write_report_plots(const std::vector<RunSummary>& runs, const std::string& dir,
                                            const std::string& question) {
  std::vector<std::string> written;
  const auto groups = by_benchmark(runs);
  const auto legend = legend_names(runs);
  // Accuracy against tokens held (memory) and tokens attended (inference): one series per method,
  // its points the method's runs (grid settings), labelled with the run's settings.
  struct TokenAxis {
    const char* name;
    const char* label;
    std::optional<double> RunSummary::*tokens;
  };
  const TokenAxis axes[] = {{"memory", "memory tokens (mean when a question is asked)", &RunSummary::memory_tokens},
                            {"inference", "inference tokens (mean attended while answering)", &RunSummary::inference_tokens}};
  struct Point {
    double x, y;
    std::string run;  // the run's settings, beside its point
    bool operator<(const Point& o) const { return std::tie(x, y, run) < std::tie(o.x, o.y, o.run); }
  };
  for (const auto& axis : axes)
    for (const auto& [benchmark, group] : groups) {
      LinePlot plot{std::string("Accuracy vs ") + axis.name + ": " + benchmark, axis.label, "accuracy (%)", {},
                    std::pair<double, double>{-3, 103}, std::nullopt, ""};  // room for markers at 0 and 100
      std::map<std::string, std::vector<Point>> points;
      std::vector<std::string> order;
      for (const auto* r : group) {
        const auto accuracy = r->scores.overall.accuracy() ? r->scores.overall.accuracy() : r->judge_accuracy;
        const auto& tokens = r->*axis.tokens;
        if (!accuracy || !tokens) continue;
        if (!points.count(r->method)) order.push_back(r->method);
        points[r->method].push_back({*tokens, *accuracy * 100, legend.at(r)});
      }
      if (order.empty()) continue;
      for (const auto& method : order) {
        auto& p = points[method];
        std::sort(p.begin(), p.end());
        PlotSeries series{method, {}, {}, true, {}};
        for (const auto& point : p) {
          series.x.push_back(point.x), series.y.push_back(point.y);
          if (p.size() > 1) series.point_labels.push_back(point.run);  // which run is which point
        }
        plot.series.push_back(std::move(series));
      }
      const std::string stem = dir + "/accuracy_vs_" + axis.name;
      const std::string path = stem + (groups.size() > 1 ? "_" + benchmark : "") + ".png";
      write_line_plot(plot, path);
      written.push_back(path);
    }

  // The question: as asked, else the latest-asked question of the first run with scores.
  std::string stream, id;
  if (!question.empty()) {
    const size_t slash = question.find('/');
    if (slash == std::string::npos) throw std::invalid_argument("--question " + question + ": expected STREAM/ID");
    stream = question.substr(0, slash), id = question.substr(slash + 1);
  } else {
    for (const auto& r : runs) {
      const RetrievalTrace* latest = nullptr;
      for (const auto& t : r.traces)
        if (!latest || t.time > latest->time) latest = &t;
      if (latest) {
        stream = latest->stream, id = latest->question_id;
        break;
      }
    }
  }
  if (stream.empty() && id.empty()) return written;
  LinePlot plot{"Retrieval score over stream time: " + stream + "/" + id, "block start (s into the stream)",
                "score, min-max scaled per run", {}, std::pair<double, double>{-0.05, 1.05}, std::nullopt, "asked"};
  for (const auto& r : runs)
    for (const auto& t : r.traces) {
      if (t.stream != stream || t.question_id != id || t.scores.empty()) continue;
      double lo = t.scores[0].second, hi = lo;
      for (const auto& [_, v] : t.scores) lo = std::min(lo, v), hi = std::max(hi, v);
      PlotSeries series{legend.at(&r), {}, {}, t.scores.size() <= 60, {}};
      for (const auto& [x, v] : t.scores) series.x.push_back(x), series.y.push_back(hi > lo ? (v - lo) / (hi - lo) : 0.5);
      plot.series.push_back(std::move(series));
      plot.marker_x = t.time;
    }
  if (plot.series.empty()) {
    if (!question.empty()) throw std::invalid_argument("--question " + question + ": no run recorded retrieval scores for it");
    return written;
  }
  const std::string path = dir + "/retrieval_scores.png";
  write_line_plot(plot, path);
  written.push_back(path);
  return written;
}

}  // namespace svqa
