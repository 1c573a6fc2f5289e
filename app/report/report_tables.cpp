#include "app/report/report_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "core/io/format.h"
#include "app/report/causality_check.h"
#include "app/report/csv_text.h"
#include "app/report/paper_columns.h"

namespace svqa {
namespace {

// Fixed digits; a magnitude past 1e12 (a hostile record's) in exponent form, not 300 digits.
std::string number(std::optional<double> v, int digits) {
  if (!v) return "";
  return std::abs(*v) < 1e12 ? fmt::format("{:.{}f}", *v, digits) : fmt::format("{:.4g}", *v);
}

std::string percent(std::optional<double> v) { return v ? number(*v * 100, 1) : ""; }

// "12.5 (10.1–14.0)": the median and the range of a timing.
std::string spread_text(const std::optional<Spread>& s, int digits) {
  if (!s) return "";
  if (s->n == 1) return number(s->median, digits);
  return number(s->median, digits) + " (" + number(s->min, digits) + "–" + number(s->max, digits) + ")";
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
  s << frames_after_question_md(runs);
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

namespace {

// A character pdflatex cannot typeset from UTF-8 with T1 fonts: anything past Latin-1 (CJK, most
// symbols). `text` holds UTF-8; returns the code point at `i` and advances `i` past it.
uint32_t next_code_point(const std::string& text, size_t& i) {
  const auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned char c = byte(i);
  const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  uint32_t cp = extra == 0 ? c : c & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) cp = (cp << 6) | (byte(i + k) & 0x3F);
  i += 1 + extra;
  return cp;
}

}  // namespace

std::string latex_escape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    const uint32_t cp = next_code_point(text, i);
    if (cp > 0xFF) {
      // Both forms: the text for lualatex/xelatex (with a font that has it), U+XXXX for pdflatex.
      std::string codes = fmt::format("U+{:04X}", cp);
      size_t end = i;
      for (size_t j = i; j < text.size();) {
        const uint32_t next = next_code_point(text, j);
        if (next <= 0xFF) break;
        codes += fmt::format(" U+{:04X}", next);
        end = j;
      }
      out += "\\svqaunicode{" + text.substr(start, end - start) + "}{" + codes + "}";
      i = end;
      continue;
    }
    const char c = text[start];
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += std::string("\\") + c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += text.substr(start, i - start);
    }
  }
  return out;
}

namespace {

// One column of the LaTeX table: its header (two short lines keep the table narrow), alignment and cell.
struct LatexColumn {
  std::string top, bottom;
  char align;
  std::function<std::string(const RunSummary&)> cell;
};

// A cell of two lines: a timing's median over its range, in small type.
std::string stacked(const std::string& top, const std::string& bottom, char align) {
  if (bottom.empty()) return top;
  return std::string("\\begin{tabular}[t]{@{}") + align + "@{}}" + top + "\\\\[-2pt]{\\scriptsize " + bottom +
         "}\\end{tabular}";
}

std::string latex_spread(const std::optional<Spread>& s, int digits, const std::string& mark) {
  if (!s) return "";
  if (s->n == 1) return number(s->median, digits) + mark;
  return stacked(number(s->median, digits) + mark, number(s->min, digits) + "--" + number(s->max, digits), 'r');
}

std::vector<LatexColumn> latex_columns(const Group& g) {
  std::vector<LatexColumn> cols;
  cols.push_back({"Method", "", 'l', [](const RunSummary& r) { return latex_escape(r.label); }});
  if (g.settings) cols.push_back({"Settings", "", 'l', [](const RunSummary& r) { return latex_escape(settings_text(r)); }});
  cols.push_back({"Acc.", "\\%", 'r', [](const RunSummary& r) { return percent(r.scores.overall.accuracy()); }});
  if (g.macro) cols.push_back({"M-Avg", "\\%", 'r', [](const RunSummary& r) { return percent(r.scores.macro_accuracy); }});
  for (const auto& c : g.categories)
    cols.push_back({latex_escape(c), "\\%", 'r', [c](const RunSummary& r) {
                      const Tally* t = category_tally(r, c);
                      return t ? percent(t->accuracy()) : std::string();
                    }});
  if (g.recall) cols.push_back({"Recall", "\\%", 'r', [](const RunSummary& r) { return percent(r.scores.recall.recall()); }});
  cols.push_back({"Mem.", "tok.", 'r', [](const RunSummary& r) { return number(r.memory_tokens, 0); }});
  cols.push_back({"Inf.", "tok.", 'r', [](const RunSummary& r) { return number(r.inference_tokens, 0); }});
  cols.push_back({"Mem.", "GB/h", 'r', [](const RunSummary& r) { return number(r.memory_gb_per_hour, 3); }});
  cols.push_back({"TTFT", "s", 'r', [](const RunSummary& r) { return latex_spread(r.ttft_s, 3, r.busy() ? "$^\\dagger$" : ""); }});
  cols.push_back({"Enc.", "fps", 'r', [](const RunSummary& r) { return latex_spread(r.encode_fps, 1, r.busy() ? "$^\\dagger$" : ""); }});
  return cols;
}

}  // namespace

std::string report_latex(const std::vector<RunSummary>& runs) {
  std::ostringstream s;
  s << "% svqa report: one booktabs table per benchmark (\\usepackage{booktabs}, graphicx); rows in the grid's order.\n"
       "% Each table fits the column (\\linewidth), shrunk only where it is wider. Two-column papers: "
       "\\newcommand{\\svqatable}{table*} before \\input spans the page.\n"
       "% Characters past Latin-1 (CJK) print as U+XXXX under pdflatex and as themselves under lualatex or xelatex\n"
       "% (with a font that has them, e.g. \\usepackage{luatexja} or fontspec).\n"
       "\\providecommand{\\svqatable}{table}\n"
       "\\providecommand{\\svqaunicode}[2]{\\ifdefined\\XeTeXrevision#1\\else\\ifdefined\\directlua#1\\else"
       "\\texttt{#2}\\fi\\fi}\n"
       "\\providecommand{\\svqafit}[1]{\\setbox0=\\hbox{#1}\\ifdim\\wd0>\\linewidth\\resizebox{\\linewidth}{!}{\\box0}"
       "\\else\\box0\\fi}\n\n";
  for (const auto& g : groups_of(runs)) {
    const auto cols = latex_columns(g);
    const std::string timing_note = g.busy ? " $^\\dagger$ " + latex_escape(busy_note(runs)) + "." : "";
    s << "\\begin{\\svqatable}[t]\n\\centering\n\\small\n\\setlength{\\tabcolsep}{3pt}\n\\caption{"
      << latex_escape(g.benchmark)
      << ": accuracy (\\%) overall and per task; memory as K/V tokens held (Mem.\\ tok.), tokens attended while "
         "answering (Inf.\\ tok.) and GB per hour of stream; TTFT (s) and encode rate (frames/s) as median, "
         "min--max below, over questions, warm-up left out."
      << timing_note << "}\n\\svqafit{\\begin{tabular}{";
    for (const auto& c : cols) s << c.align;
    s << "}\n\\toprule\n";
    for (size_t line = 0; line < 2; ++line) {
      for (size_t k = 0; k < cols.size(); ++k) s << (k ? " & " : "") << (line ? cols[k].bottom : cols[k].top);
      s << " \\\\\n";
    }
    s << "\\midrule\n";
    for (const auto* r : g.runs) {
      for (size_t k = 0; k < cols.size(); ++k) s << (k ? " & " : "") << cols[k].cell(*r);
      s << " \\\\\n";
    }
    s << "\\bottomrule\n\\end{tabular}}\n\\end{\\svqatable}\n\n";
  }
  return s.str();
}

}  // namespace svqa
