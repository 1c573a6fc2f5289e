#include "core/report/report_tables.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "core/io/format.h"
#include "core/report/csv_text.h"
#include "core/report/paper_columns.h"

namespace svqa {
namespace {

std::string number(std::optional<double> v, int digits) { return v ? fmt::format("{:.{}f}", *v, digits) : ""; }

std::string percent(std::optional<double> v) { return v ? number(*v * 100, 1) : ""; }

// "12.5 (10.1–14.0)": the median and the range of a timing; `dash` separates the range.
std::string spread_text(const std::optional<Spread>& s, int digits, const std::string& dash = "–") {
  if (!s) return "";
  if (s->n == 1) return number(s->median, digits);
  return number(s->median, digits) + " (" + number(s->min, digits) + dash + number(s->max, digits) + ")";
}

std::string md_cell(std::string v) {
  for (size_t i = 0; (i = v.find('|', i)) != std::string::npos; i += 2) v.replace(i, 1, "\\|");
  return v;
}

// One benchmark's runs and the columns they need.
struct Group {
  std::string benchmark;
  std::vector<const RunSummary*> runs;
  std::vector<std::string> categories;  // the first run's order (the official table's), then others
  bool open_ended = false, recall = false, macro = false;
  bool settings = false;  // a display name shared by runs: their settings tell them apart
  bool busy = false;
};

std::vector<Group> groups_of(const std::vector<RunSummary>& runs) {
  std::vector<Group> out;
  for (const auto& r : runs) {
    if (!r.problem.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const Group& g) { return g.benchmark == r.benchmark; });
    if (it == out.end()) it = out.insert(out.end(), Group{r.benchmark, {}, {}});
    it->runs.push_back(&r);
  }
  for (auto& g : out) {
    std::map<std::string, int> labels;
    for (const auto* r : g.runs) {
      for (const auto& [name, _] : r->scores.categories)
        if (std::find(g.categories.begin(), g.categories.end(), name) == g.categories.end()) g.categories.push_back(name);
      g.open_ended = g.open_ended || r->scores.open_ended > 0;
      g.recall = g.recall || r->scores.recall.with_evidence > 0;
      g.macro = g.macro || r->scores.macro_accuracy.has_value();
      g.settings = g.settings || ++labels[r->label] > 1;
      g.busy = g.busy || r->busy();
    }
  }
  return out;
}

const Tally* category_tally(const RunSummary& r, const std::string& name) {
  for (const auto& [n, t] : r.scores.categories)
    if (n == name) return &t;
  return nullptr;
}

std::string busy_note(const std::vector<RunSummary>& runs) {
  double load = 0;
  int64_t cpus = 0;
  for (const auto& r : runs)
    if (r.busy()) load = std::max(load, r.max_load), cpus = std::max(cpus, r.cpus);
  return fmt::format("measured while the machine was busy (1-minute load average up to {:.1f} on {} CPUs): "
                     "other processes competed for the CPUs, so these timings are slower than the method",
                     load, cpus);
}

}  // namespace

std::string report_markdown(const std::vector<RunSummary>& runs) {
  std::ostringstream s;
  s << "# Results\n\n";
  bool any_busy = false;
  for (const auto& g : groups_of(runs)) {
    any_busy = any_busy || g.busy;
    s << "## " << g.benchmark << "\n\n| method |" << (g.settings ? " settings |" : "")
      << " questions | answered | errored | accuracy %";
    const bool paper = any_expected(g.runs);
    if (paper) s << paper_header_md();
    if (g.macro) s << " | M-Avg %";
    for (const auto& c : g.categories) s << " | " << md_cell(c) << " %";
    if (g.open_ended) s << " | judge acc % | judge score | judge failed";
    if (g.recall) s << " | recall %";
    s << " | memory tokens | inference tokens | memory GB/h | encode fps | TTFT s |\n|---|" << (g.settings ? "---|" : "");
    const size_t numeric = 4 + (paper ? 2 : 0) + g.macro + g.categories.size() + (g.open_ended ? 3 : 0) + g.recall + 5;
    for (size_t i = 0; i < numeric; ++i) s << "---:|";
    s << "\n";
    for (const auto* r : g.runs) {
      const Tally& o = r->scores.overall;
      const int64_t questions = o.questions + r->scores.open_ended;
      s << "| " << md_cell(r->label) << " | " << (g.settings ? md_cell(settings_text(*r)) + " | " : "") << questions
        << " | " << r->records - r->errored << " | " << r->errored << " | " << percent(o.accuracy());
      if (paper) s << paper_cells_md(*r);
      if (g.macro) s << " | " << percent(r->scores.macro_accuracy);
      for (const auto& c : g.categories) {
        const Tally* t = category_tally(*r, c);
        s << " | " << (t ? percent(t->accuracy()) : "");
      }
      if (g.open_ended) s << " | " << percent(r->judge_accuracy) << " | " << number(r->judge_score, 2) << " | " << r->judge_failed;
      if (g.recall) s << " | " << percent(r->scores.recall.recall());
      const std::string mark = r->busy() ? " †" : "";
      s << " | " << number(r->memory_tokens, 0) << " | " << number(r->inference_tokens, 0) << " | "
        << number(r->memory_gb_per_hour, 3) << " | " << spread_text(r->encode_fps, 2) << mark << " | "
        << spread_text(r->ttft_s, 3) << mark << " |\n";
    }
    s << "\n";
  }
  s << "Accuracy: correct / (correct + wrong) by the benchmark's rule; questions not yet answered, errored or "
       "unparseable are left out and counted in the CSV. Memory tokens: K/V tokens held when a question is asked; "
       "inference tokens: tokens attended while answering (sinks + retrieved, mean over layers); memory GB/h: the "
       "bank's bytes (RAM + disk) per hour of stream when asked; means over answered questions. Encode fps (frames "
       "encoded per second since the previous question) and TTFT (retrieval + prompt prefill): median (min–max) "
       "over answered questions, the first question of each stream (warm-up) left out.\n";
  if (const std::string note = paper_note_md(runs); !note.empty()) s << "\n" << note;
  if (any_busy) s << "\n† " << busy_note(runs) << ".\n";
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
  s << "run,label,method,settings,benchmark,category,questions,scored,correct,wrong,unanswered,missing,errored,"
       "accuracy,judge_accuracy,judge_score,judge_failed,retrieval_recall,memory_tokens,inference_tokens,"
       "memory_gb_per_hour,encode_fps,encode_fps_min,encode_fps_max,ttft_s,ttft_s_min,ttft_s_max,timed_questions,"
       "max_load,cpus,busy,dir\n";
  for (const auto& g : groups_of(runs))
    for (const auto* r : g.runs) {
      auto row = [&](const std::string& category, const Tally* t, std::optional<double> accuracy) {
        s << csv_field(r->name) << "," << csv_field(r->label) << "," << csv_field(r->method) << ","
          << csv_field(settings_text(*r)) << "," << g.benchmark << "," << csv_field(category) << ",";
        if (t)
          s << t->questions << "," << t->scored() << "," << t->correct << "," << t->wrong << "," << t->unanswered << ","
            << t->missing << "," << t->errored << ",";
        else
          s << ",,,,,,,";
        s << number(accuracy, 6) << ",";
        if (category == "overall") {
          const auto part = [](const std::optional<Spread>& sp, double Spread::*f, int digits) {
            return sp ? number((*sp).*f, digits) : std::string();
          };
          s << number(r->judge_accuracy, 6) << "," << number(r->judge_score, 4) << "," << r->judge_failed << ","
            << number(r->scores.recall.recall(), 6) << "," << number(r->memory_tokens, 1) << ","
            << number(r->inference_tokens, 1) << "," << number(r->memory_gb_per_hour, 6) << ","
            << part(r->encode_fps, &Spread::median, 3) << "," << part(r->encode_fps, &Spread::min, 3) << ","
            << part(r->encode_fps, &Spread::max, 3) << "," << part(r->ttft_s, &Spread::median, 4) << ","
            << part(r->ttft_s, &Spread::min, 4) << "," << part(r->ttft_s, &Spread::max, 4) << ","
            << (r->ttft_s ? r->ttft_s->n : 0) << "," << number(r->max_load, 2) << "," << r->cpus << ","
            << (r->busy() ? "yes" : "no");
        } else {
          s << ",,,,,,,,,,,,,,,,";
        }
        s << "," << csv_field(r->dir) << "\n";
      };
      row("overall", &r->scores.overall, r->scores.overall.accuracy());
      if (r->scores.macro_accuracy) row("M-Avg", nullptr, r->scores.macro_accuracy);
      for (const auto& [name, t] : r->scores.categories) row(name, &t, t.accuracy());
    }
  return s.str();
}

std::string latex_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += std::string("\\") + c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}

std::string report_latex(const std::vector<RunSummary>& runs) {
  std::ostringstream s;
  s << "% svqa report: one booktabs table per benchmark (\\usepackage{booktabs}); rows in the grid's order.\n";
  for (const auto& g : groups_of(runs)) {
    const std::string timing_note = g.busy ? " $^\\dagger$ " + latex_escape(busy_note(runs)) + "." : "";
    s << "\\begin{table}[t]\n\\centering\n\\small\n\\caption{" << latex_escape(g.benchmark)
      << ": accuracy (\\%) overall and per task, memory (GB per hour of stream), TTFT (s) and encode rate "
         "(frames/s) as median (min--max) over questions, warm-up left out." << timing_note << "}\n"
      << "\\begin{tabular}{l" << (g.settings ? "l" : "") << "r" << (g.macro ? "r" : "")
      << std::string(g.categories.size(), 'r') << (g.recall ? "r" : "") << "rrr}\n\\toprule\n"
      << "Method" << (g.settings ? " & Settings" : "") << " & Acc." << (g.macro ? " & M-Avg" : "");
    for (const auto& c : g.categories) s << " & " << latex_escape(c);
    if (g.recall) s << " & Recall";
    s << " & Memory & TTFT & Encode \\\\\n\\midrule\n";
    for (const auto* r : g.runs) {
      const std::string mark = r->busy() ? "$^\\dagger$" : "";
      s << latex_escape(r->label) << (g.settings ? " & " + latex_escape(settings_text(*r)) : "") << " & "
        << percent(r->scores.overall.accuracy());
      if (g.macro) s << " & " << percent(r->scores.macro_accuracy);
      for (const auto& c : g.categories) {
        const Tally* t = category_tally(*r, c);
        s << " & " << (t ? percent(t->accuracy()) : "");
      }
      if (g.recall) s << " & " << percent(r->scores.recall.recall());
      s << " & " << number(r->memory_gb_per_hour, 3) << " & " << spread_text(r->ttft_s, 3, "--") << mark << " & "
        << spread_text(r->encode_fps, 1, "--") << mark << " \\\\\n";
    }
    s << "\\bottomrule\n\\end{tabular}\n\\end{table}\n\n";
  }
  return s.str();
}

}  // namespace svqa
