// Reports: progress tags and durations, and the comparison table's layout from hand-made runs.

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "app/run/progress.h"
#include "app/report/report_figures.h"
#include "app/report/report_tables.h"
#include "app/report/run_report.h"

using namespace svqa;

TEST_CASE("durations and progress tags", "[report]") {
  CHECK(format_duration(4.25) == "4.2s");
  CHECK(format_duration(42.4) == "42s");
  CHECK(format_duration(65) == "1m05s");
  CHECK(format_duration(7380) == "2h03m");
  CHECK(format_duration(-1) == "?");
  CHECK(progress_bar(3, 10, 10) == "[###.......]");
  CHECK(progress_bar(12, 10, 4) == "[####]");

  Progress p(40, 10);  // resumed: 10 done before
  const std::string tag = p.step();
  CHECK(tag.rfind("[11/40  27% · ", 0) == 0);
  CHECK(tag.find(" each · ETA ") != std::string::npos);
  CHECK(p.done() == 11);
}

namespace {

RunSummary run(const std::string& name, const std::string& label, int64_t correct, int64_t wrong,
               std::vector<std::pair<std::string, Tally>> categories) {
  RunSummary r;
  r.dir = "results/" + name;
  r.name = name;
  r.label = label;
  r.method = "rekv_sliding_window + internal";
  r.benchmark = "streamingbench";
  r.scores.overall.questions = correct + wrong + 1;
  r.scores.overall.correct = correct;
  r.scores.overall.wrong = wrong;
  r.scores.overall.errored = 1;
  r.scores.categories = std::move(categories);
  r.records = correct + wrong + 1;
  r.errored = 1;
  r.memory_tokens = 1000;
  r.inference_tokens = 200;
  r.memory_gb_per_hour = 0.5;
  r.ttft_s = Spread{0.25, 0.2, 0.3125, 4};
  r.encode_fps = Spread{12.5, 10, 14, 4};
  r.cpus = 2;
  r.max_load = 1.5;
  return r;
}

Tally tally(int64_t correct, int64_t wrong) {
  Tally t;
  t.questions = correct + wrong;
  t.correct = correct;
  t.wrong = wrong;
  return t;
}

}  // namespace

TEST_CASE("the report table: a row per run by display name, the union of categories, timings with their spread", "[report]") {
  std::vector<RunSummary> runs;
  runs.push_back(run("a__k=1", "ReKV", 3, 1, {{"Counting", tally(3, 1)}}));
  runs.push_back(run("b, quoted", "MuKV (paper) & co", 1, 3, {{"Counting", tally(0, 2)}, {"Object Recognition", tally(1, 1)}}));
  runs[1].max_load = 5.25;  // busier than its 2 CPUs
  RunSummary broken;
  broken.dir = "results/broken";
  broken.problem = "config.yaml: cannot read";
  runs.push_back(broken);

  const std::string md = report_markdown(runs);
  CHECK(md.find("| method | questions | answered | errored | accuracy % | Counting % | Object Recognition % | "
                "memory tokens | inference tokens | memory GB/h | encode fps | TTFT s |") != std::string::npos);
  CHECK(md.find("| ReKV | 5 | 4 | 1 | 75.0 | 75.0 |  | 1000 | 200 | 0.500 | 12.50 (10.00–14.00) | 0.250 (0.200–0.312) |") !=
        std::string::npos);
  CHECK(md.find("| MuKV (paper) & co | 5 | 4 | 1 | 25.0 | 0.0 | 50.0 |") != std::string::npos);
  CHECK(md.find("12.50 (10.00–14.00) † | 0.250 (0.200–0.312) † |") != std::string::npos);  // the busy run's timings
  CHECK(md.find("† measured while the machine was busy (1-minute load average up to 5.2 on 2 CPUs)") != std::string::npos);
  CHECK(md.find("settings") == std::string::npos);  // every display name is one run's: no settings column
  CHECK(md.find("judge") == std::string::npos);     // no open-ended questions: no judge columns
  CHECK(md.find("- results/broken: config.yaml: cannot read") != std::string::npos);

  const std::string csv = report_csv(runs);
  CHECK(csv.rfind("run,label,method,settings,benchmark,category,questions,", 0) == 0);
  CHECK(csv.find("\na__k=1,ReKV,rekv_sliding_window + internal,,streamingbench,overall,5,4,3,1,0,0,1,0.750000,,,0,,"
                 "1000.0,200.0,0.500000,12.500,10.000,14.000,0.2500,0.2000,0.3125,4,1.50,2,no,results/a__k=1\n") !=
        std::string::npos);
  CHECK(csv.find("\n\"b, quoted\",MuKV (paper) & co,rekv_sliding_window + internal,,streamingbench,Object Recognition,2,2,1,1,") !=
        std::string::npos);
  CHECK(csv.find(",5.25,2,yes,") != std::string::npos);
  CHECK(csv.find("broken") == std::string::npos);  // listed in the markdown, not a row of numbers

  // LaTeX: every measure the markdown has (tokens held and attended, GB/h with its unit), headers on
  // two short lines, each timing's range under its median: narrow enough for one column.
  const std::string tex = report_latex(runs);
  CHECK(tex.find("\\begin{tabular}{lrrrrrrrr}\n\\toprule\n"
                 "Method & Acc. & Counting & Object Recognition & Mem. & Inf. & Mem. & TTFT & Enc. \\\\\n"
                 " & \\% & \\% & \\% & tok. & tok. & GB/h & s & fps \\\\\n\\midrule\n") != std::string::npos);
  CHECK(tex.find("MuKV (paper) \\& co & 25.0 & 0.0 & 50.0 & 1000 & 200 & 0.500 & "
                 "\\begin{tabular}[t]{@{}r@{}}0.250$^\\dagger$\\\\[-2pt]{\\scriptsize 0.200--0.312}\\end{tabular} & "
                 "\\begin{tabular}[t]{@{}r@{}}12.5$^\\dagger$\\\\[-2pt]{\\scriptsize 10.0--14.0}\\end{tabular} \\\\\n") !=
        std::string::npos);
  CHECK(tex.find("\\bottomrule\n\\end{tabular}}\n\\end{\\svqatable}") != std::string::npos);
  CHECK(tex.find("\\begin{\\svqatable}[t]") != std::string::npos);  // table, or table* where the paper defines it so
}

TEST_CASE("runs sharing a display name show the settings that tell them apart", "[report]") {
  std::vector<RunSummary> runs = {run("g__retrieve_size=4", "ReKV", 3, 1, {}), run("g__retrieve_size=8", "ReKV", 2, 2, {})};
  runs[0].settings = {{"retrieve_size", "4"}};
  runs[1].settings = {{"retrieve_size", "8"}};
  const std::string md = report_markdown(runs);
  CHECK(md.find("| method | settings | questions |") != std::string::npos);
  CHECK(md.find("| ReKV | retrieve_size=8 | 5 |") != std::string::npos);
  CHECK(report_latex(runs).find("ReKV & retrieve\\_size=4 & 75.0") != std::string::npos);
}

TEST_CASE("rows follow the grid's order, numbers compared as numbers", "[report]") {
  CHECK(natural_less("g__n_local=60", "g__n_local=120"));
  CHECK_FALSE(natural_less("g__n_local=120", "g__n_local=60"));
  CHECK(natural_less("a9", "a10"));
  CHECK(natural_less("a", "ab"));
  std::vector<RunSummary> runs = {run("g__n_local=120", "x", 1, 1, {}), run("g__n_local=60", "x", 1, 1, {}),
                                  run("h__retrieval=recent", "y", 1, 1, {}), run("h__retrieval=internal", "y", 1, 1, {})};
  for (auto& r : runs) r.dir = "results/" + r.name.substr(0, 1) + "/" + r.name;
  runs[2].grid_position = 0;  // h's grid.json lists recent first
  runs[3].grid_position = 1;
  order_runs(runs);
  CHECK(runs[0].name == "g__n_local=60");
  CHECK(runs[1].name == "g__n_local=120");
  CHECK(runs[2].name == "h__retrieval=recent");
  CHECK(runs[3].name == "h__retrieval=internal");
}

TEST_CASE("timings: the median and range of a run's measurements", "[report]") {
  CHECK_FALSE(spread_of({}));
  const auto odd = spread_of({3, 1, 2});
  CHECK((odd->median == 2 && odd->min == 1 && odd->max == 3 && odd->n == 3));
  CHECK(spread_of({4, 1, 2, 10})->median == 3);
}

TEST_CASE("no two report rows read alike: a name shared by runs in two places gets the directory", "[report]") {
  std::vector<RunSummary> runs = {run("demo", "ReKV", 3, 1, {}), run("demo", "ReKV", 2, 2, {}),
                                  run("other", "Recent", 1, 1, {})};
  runs[0].dir = "results/a/demo";
  runs[1].dir = "results/b/demo";
  distinct_names(runs);
  CHECK(runs[0].name == "demo (results/a/demo)");
  CHECK(runs[1].name == "demo (results/b/demo)");
  CHECK(runs[2].name == "other");
}

TEST_CASE("LaTeX: special characters escaped", "[report]") {
  CHECK(latex_escape("a_b & 50% #1 {x} ~^\\") == "a\\_b \\& 50\\% \\#1 \\{x\\} \\textasciitilde{}\\textasciicircum{}\\textbackslash{}");
  CHECK(latex_escape("$k$=4 caf\u00e9") == "\\$k\\$=4 caf\u00e9");  // Latin-1 stays: pdflatex typesets it
  // Past Latin-1 (CJK): the text for lualatex/xelatex and its code points for pdflatex.
  CHECK(latex_escape("ReKV \u4e2d\u6587 x") == "ReKV \\svqaunicode{\u4e2d\u6587}{U+4E2D U+6587} x");
  CHECK(latex_escape("\U0001F600") == "\\svqaunicode{\U0001F600}{U+1F600}");
}

TEST_CASE("report rows with the same display name and settings get their run's name", "[report]") {
  std::vector<RunSummary> runs = {run("demo", "ReKV", 3, 1, {}), run("other", "ReKV", 2, 2, {}),
                                  run("g__retrieve_size=4", "MuKV", 1, 1, {}), run("g__retrieve_size=8", "MuKV", 1, 1, {})};
  runs[2].settings = {{"retrieve_size", "4"}};
  runs[3].settings = {{"retrieve_size", "8"}};
  distinct_names(runs);
  CHECK(runs[0].label == "ReKV (demo)");
  CHECK(runs[1].label == "ReKV (other)");
  CHECK(runs[2].label == "MuKV");  // the settings column tells these apart: a method over budgets stays one series
  CHECK(runs[3].label == "MuKV");
  const std::string md = report_markdown(runs);
  CHECK(md.find("| ReKV (demo) |") != std::string::npos);
  CHECK(md.find("| ReKV (other) |") != std::string::npos);
}

TEST_CASE("figure data: caption columns, the asked question, non-finite scores left out", "[report]") {
  std::vector<RunSummary> runs = {run("a", "ReKV", 1, 1, {})};
  runs[0].backbone = "tiny-llava_onevision";
  runs[0].budget = "retrieve_size=8";
  runs[0].traces.push_back({"s1", "q6", 30, {{0, 1.0}, {10, INFINITY}, {20, 3.0}}});
  const std::string csv = figure_data_csv(runs, "");
  CHECK(csv.rfind("figure,benchmark,backbone,budget,series,label,x,y\n", 0) == 0);
  CHECK(csv.find("accuracy_vs_memory,streamingbench,tiny-llava_onevision,retrieve_size=8,ReKV,ReKV,1000,50\n") !=
        std::string::npos);
  CHECK(csv.find("retrieval_scores,streamingbench,tiny-llava_onevision,retrieve_size=8,ReKV,,0,0\n") != std::string::npos);
  CHECK(csv.find("retrieval_scores,streamingbench,tiny-llava_onevision,retrieve_size=8,ReKV,,20,1\n") != std::string::npos);
  CHECK(csv.find(",10,") == std::string::npos);  // the infinite score: no point, and the others still scaled
  CHECK(csv.find("retrieval_scores,streamingbench,tiny-llava_onevision,retrieve_size=8,,s1/q6,30,\n") != std::string::npos);
  CHECK(csv.find(",inf") == std::string::npos);
}
