#include "app/report/report_figures.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "core/io/format.h"
#include "app/report/csv_text.h"

namespace svqa {
namespace {

// The figures' tidy rows: a point of a run (its benchmark, backbone and budget name the figure's
// caption). Non-finite values never reach the figures (summaries leave them out).
struct Rows {
  std::ostringstream s;
  void add(const std::string& figure, const RunSummary& run, const std::string& series, const std::string& label,
           double x, std::optional<double> y) {
    s << figure << "," << csv_field(run.benchmark) << "," << csv_field(run.backbone) << "," << csv_field(run.budget)
      << "," << csv_field(series) << "," << csv_field(label) << "," << fmt::format("{:.9g}", x) << ","
      << (y ? fmt::format("{:.9g}", *y) : "") << "\n";
  }
};

// A run's name in a figure: its display name, with its settings where other runs share that name.
std::map<const RunSummary*, std::string> series_names(const std::vector<RunSummary>& runs) {
  std::map<std::string, int> count;
  for (const auto& r : runs) ++count[r.label];
  std::map<const RunSummary*, std::string> out;
  for (const auto& r : runs) {
    const std::string settings = settings_text(r);
    out[&r] = count[r.label] > 1 && !settings.empty() ? r.label + " (" + settings + ")" : r.label;
  }
  return out;
}

// The question of the score figure: as asked, else the latest-asked question of the first run with scores.
std::pair<std::string, std::string> score_question(const std::vector<RunSummary>& runs, const std::string& question) {
  if (!question.empty()) {
    const size_t slash = question.find('/');
    if (slash == std::string::npos) throw std::invalid_argument("--question " + question + ": expected STREAM/ID");
    return {question.substr(0, slash), question.substr(slash + 1)};
  }
  for (const auto& r : runs) {
    const RetrievalTrace* latest = nullptr;
    for (const auto& t : r.traces)
      if (!latest || t.time > latest->time) latest = &t;
    if (latest) return {latest->stream, latest->question_id};
  }
  return {};
}

}  // namespace

std::string figure_data_csv(const std::vector<RunSummary>& runs, const std::string& question) {
  Rows rows;
  rows.s << "figure,benchmark,backbone,budget,series,label,x,y\n";
  const auto names = series_names(runs);
  std::map<std::string, int> benchmarks;
  for (const auto& r : runs)
    if (r.problem.empty()) ++benchmarks[r.benchmark];
  // Accuracy against tokens: a series per display name (a method's runs over budgets make a line),
  // each point labelled with the run's name in the figure.
  std::map<std::string, int> per_label;
  for (const auto& r : runs) ++per_label[r.label];
  for (const auto& r : runs) {
    if (!r.problem.empty()) continue;
    const auto accuracy = r.scores.overall.accuracy() ? r.scores.overall.accuracy() : r.judge_accuracy;
    if (!accuracy) continue;
    const std::string suffix = benchmarks.size() > 1 ? "_" + r.benchmark : "";
    const std::string point = per_label[r.label] > 1 && !settings_text(r).empty() ? settings_text(r) : r.label;
    if (r.memory_tokens) rows.add("accuracy_vs_memory" + suffix, r, r.label, point, *r.memory_tokens, *accuracy * 100);
    if (r.inference_tokens)
      rows.add("accuracy_vs_inference" + suffix, r, r.label, point, *r.inference_tokens, *accuracy * 100);
  }
  for (const auto& r : runs)
    for (const auto& [time, ttft] : r.ttft_by_time) rows.add("ttft_vs_stream_time", r, names.at(&r), "", time, ttft);
  // Where the retrieved blocks lie: the share of them in each tenth of the past.
  for (const auto& r : runs) {
    if (r.retrieved_age.empty()) continue;
    std::vector<double> bins(10, 0.0);
    for (const double age : r.retrieved_age) bins[std::min<size_t>(9, static_cast<size_t>(age * 10))] += 1;
    for (size_t b = 0; b < bins.size(); ++b)
      rows.add("retrieval_temporal_bias", r, names.at(&r), "", (static_cast<double>(b) + 0.5) / 10,
               bins[b] / static_cast<double>(r.retrieved_age.size()));
  }
  const auto [stream, id] = score_question(runs, question);
  bool found = false;
  for (const auto& r : runs)
    for (const auto& t : r.traces) {
      if (t.stream != stream || t.question_id != id || t.scores.empty()) continue;
      // Min-max scaled over the finite scores (an infinite one would make every other NaN).
      double lo = INFINITY, hi = -INFINITY;
      for (const auto& [_, v] : t.scores)
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
      for (const auto& [x, v] : t.scores)
        if (std::isfinite(v) && std::isfinite(x))
          rows.add("retrieval_scores", r, names.at(&r), "", x, hi > lo ? (v - lo) / (hi - lo) : 0.5);
      if (!found) rows.add("retrieval_scores", r, "", stream + "/" + id, t.time, std::nullopt);  // the question's time
      found = true;
    }
  if (!question.empty() && !found) throw std::invalid_argument("--question " + question + ": no run recorded retrieval scores for it");
  return rows.s.str();
}

std::vector<std::string> draw_figures(const std::string& python, const std::string& script, const std::string& data_csv,
                                      const std::string& out_dir) {
  const std::vector<std::string> args = {python, script, "--data", data_csv, "--out", out_dir};
  std::string command;
  for (const auto& a : args) command += (command.empty() ? "" : " ") + a;
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("figures: cannot start " + command);
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw std::runtime_error("figures: `" + command + "` failed (exit " + std::to_string(code) + ")" +
                             (code == 127 ? ": no such Python (--python, SVQA_PYTHON, or the one recorded in share/svqa/python)" : "") +
                             "; it needs matplotlib: .venv/bin/pip install -r requirements.txt (scripts/setup.sh does)");
  }
  std::ifstream in(out_dir + "/figures.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  std::vector<std::string> written;
  if (j.is_object() && j.contains("figures"))
    for (const auto& f : j["figures"])
      for (const auto& path : f.value("files", nlohmann::json::array())) written.push_back(path.get<std::string>());
  return written;
}

}  // namespace svqa
