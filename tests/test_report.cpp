// Reports: progress tags and durations, and the comparison table's layout from hand-made runs.

#include <catch2/catch.hpp>

#include <string>

#include "core/run/progress.h"
#include "core/report/line_plot.h"
#include "core/report/run_report.h"

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

RunSummary run(const std::string& name, const std::string& method, int64_t correct, int64_t wrong,
               std::vector<std::pair<std::string, Tally>> categories) {
  RunSummary r;
  r.dir = "results/" + name;
  r.name = name;
  r.method = method;
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
  r.ttft_s = 0.25;
  r.encode_fps = 12.5;
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

TEST_CASE("the report table: a row per run, the union of categories, CSV in long format", "[report]") {
  std::vector<RunSummary> runs;
  runs.push_back(run("a__k=1", "rekv + internal", 3, 1, {{"Counting", tally(3, 1)}}));
  runs.push_back(run("b, quoted", "rekv + recent", 1, 3, {{"Counting", tally(0, 2)}, {"Object Recognition", tally(1, 1)}}));
  RunSummary broken;
  broken.dir = "results/broken";
  broken.problem = "config.yaml: cannot read";
  runs.push_back(broken);

  const std::string md = report_markdown(runs);
  CHECK(md.find("| run | method | questions | answered | errored | accuracy % | Counting % | Object Recognition % | "
                "memory tokens | inference tokens | encode fps | TTFT s |") != std::string::npos);
  CHECK(md.find("| a__k=1 | rekv + internal | 5 | 4 | 1 | 75.0 | 75.0 |  | 1000 | 200 | 12.50 | 0.250 |") !=
        std::string::npos);
  CHECK(md.find("| b, quoted | rekv + recent | 5 | 4 | 1 | 25.0 | 0.0 | 50.0 |") != std::string::npos);
  CHECK(md.find("judge") == std::string::npos);  // no open-ended questions: no judge columns
  CHECK(md.find("- results/broken: config.yaml: cannot read") != std::string::npos);

  const std::string csv = report_csv(runs);
  CHECK(csv.rfind("run,method,benchmark,category,questions,", 0) == 0);
  CHECK(csv.find("\na__k=1,rekv + internal,streamingbench,overall,5,4,3,1,0,0,1,0.750000,,,0,,1000.0,200.0,12.500,0.2500,"
                 "results/a__k=1\n") != std::string::npos);
  CHECK(csv.find("\n\"b, quoted\",rekv + recent,streamingbench,Object Recognition,2,2,1,1,") != std::string::npos);
  CHECK(csv.find("broken") == std::string::npos);  // listed in the markdown, not a row of numbers
}

TEST_CASE("no two report rows read alike: a name shared by runs in two places gets the directory", "[report]") {
  std::vector<RunSummary> runs = {run("demo", "rekv + internal", 3, 1, {}), run("demo", "rekv + internal", 2, 2, {}),
                                  run("other", "rekv + recent", 1, 1, {})};
  runs[0].dir = "results/a/demo";
  runs[1].dir = "results/b/demo";
  distinct_names(runs);
  CHECK(runs[0].name == "demo (results/a/demo)");
  CHECK(runs[1].name == "demo (results/b/demo)");
  CHECK(runs[2].name == "other");
}

TEST_CASE("plot legends wrap instead of cutting, and coinciding series are found", "[report]") {
  const std::string label = "ablation__retrieval=internal__n_local=15000__retrieve_size=64__similarity=cosine";
  const auto lines = wrap_text(label, 190, 0.4);
  CHECK(lines.size() > 1);
  std::string joined;
  for (const auto& l : lines) joined += l;
  CHECK(joined == label);  // nothing dropped
  CHECK(lines[0].back() == '_');  // broken after a separator where one fits

  const std::vector<std::vector<std::pair<int, int>>> points = {{{10, 20}, {30, 40}}, {{11, 21}, {30, 39}}, {{10, 20}}, {{50, 50}, {60, 60}}};
  CHECK(coinciding_series(points) == std::vector<int>{-1, 0, -1, -1});  // within 2 pixels: drawn over series 0
}
