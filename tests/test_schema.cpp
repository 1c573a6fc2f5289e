// Typed options: defaults, constraints and how they are described.

#include <catch2/catch.hpp>

#include "core/config/experiment.h"
#include "tests/test_registries.h"

namespace svqa {

TEST_CASE("field descriptions carry type, default, range and choices", "[schema]") {
  const auto fields = Schema<test::TopKOptions>().fields();
  REQUIRE(fields.size() == 6);
  CHECK(fields[0].name == "top_k");
  CHECK(fields[0].type == "integer");
  CHECK(fields[0].default_yaml == "64");
  CHECK(fields[0].min == 1.0);
  CHECK(fields[3].type == "number");
  CHECK(fields[3].max == 1.0);
  CHECK(fields[4].default_yaml == "false");
  CHECK(fields[5].type == "list of numbers");
  CHECK(fields[5].default_yaml == "[0.5, 0.5]");

  const auto window = Schema<test::WindowOptions>().fields();
  CHECK(window[2].choices == std::vector<std::string>{"contiguous", "original"});
  CHECK(window[2].default_yaml == "\"contiguous\"");

  const auto exp = Schema<test::ExportOptions>().fields();
  CHECK(exp[0].required);
  CHECK(exp[0].default_yaml.empty());
}

TEST_CASE("nested sections parse with their own defaults", "[schema]") {
  ConfigNode node = parse_yaml_text("{runtime: {threads: 3}}", "test");
  ErrorList errors;
  const ExperimentHeader h = Schema<ExperimentHeader>().parse(&node, "", errors);
  REQUIRE(errors.empty());
  CHECK(h.runtime.threads == 3);
  CHECK(h.runtime.dtype == "float32");
  CHECK(h.output.dir == "results");
}

TEST_CASE("integers reject fractions, overflow and quoting, and numbers accept integers", "[schema]") {
  auto parse = [](const std::string& yaml) {
    ConfigNode node = parse_yaml_text(yaml, "test");
    ErrorList errors;
    auto o = Schema<test::TopKOptions>().parse(&node, "r", errors);
    return std::make_pair(o, errors.lines());
  };
  CHECK(parse("{top_k: 2.5}").second == std::vector<std::string>{"test: r.top_k: expected a positive integer, got \"2.5\""});
  CHECK(parse("{top_k: 99999999999999999999}").second.size() == 1);
  CHECK(parse("{top_k: 0}").second == std::vector<std::string>{"test: r.top_k: expected a positive integer, got 0"});
  auto [o, errs] = parse("{temperature: 2, mix: 1}");
  CHECK(errs.empty());
  CHECK(o.temperature == 2.0);
  CHECK(o.mix == 1.0);
}

}  // namespace svqa
