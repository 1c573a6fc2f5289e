// `--devices` lists (app/cluster/device_children.h) and the #SBATCH values of svqa submit
// (app/cluster/slurm_script.h): what a child or a directive gets from what the user typed.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <stdexcept>

#include "app/cluster/device_children.h"
#include "app/cluster/slurm_script.h"

namespace svqa {

TEST_CASE("devices (--devices): a CUDA index counts among the GPUs this process sees", "[cluster]") {
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  auto devices = parse_local_devices("0,cuda:3");
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].kind == "cuda");
  CHECK(devices[0].visible_gpu == "0");
  CHECK(devices[1].visible_gpu == "3");
  ::setenv("CUDA_VISIBLE_DEVICES", "5,GPU-abc", 1);  // the parent's own GPUs, as Slurm or a user set them
  devices = parse_local_devices("1,0");
  CHECK(devices[0].visible_gpu == "GPU-abc");
  CHECK(devices[1].visible_gpu == "5");
  CHECK_THROWS_WITH(parse_local_devices("2"), Catch::Contains("this process sees 2 GPUs"));
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  devices = parse_local_devices("cpu,cpu,cpu");
  CHECK(devices.size() == 3);
  CHECK((devices[2].kind == "cpu" && devices[2].visible_gpu.empty()));
  CHECK_THROWS_WITH(parse_local_devices("cpu,1"), Catch::Contains("every device of one kind"));
  for (const char* bad : {"", "0,", "cuda", "cuda:", "gpu0", "-1", "1000"})
    CHECK_THROWS_AS(parse_local_devices(bad), std::invalid_argument);
}

TEST_CASE("#SBATCH values: plain as is, else quoted as sbatch reads its directive lines", "[cluster]") {
  CHECK(sbatch_value("svqa-grid") == "svqa-grid");
  CHECK(sbatch_value("/out/g/slurm/logs/%A_%a.out") == "/out/g/slurm/logs/%A_%a.out");
  CHECK(sbatch_value("/a b/#1/x.out") == "\"/a b/#1/x.out\"");
  CHECK(sbatch_value("say \"hi\" \\o") == "\"say \\\"hi\\\" \\\\o\"");
  CHECK_THROWS_AS(sbatch_value("a\nb"), std::invalid_argument);
  CHECK(slurm_filename_folder("/r/50%/logs") == "/r/50%%/logs");
  CHECK_THROWS_WITH(slurm_filename_folder("/r/a\\b"), Catch::Contains("a backslash in a Slurm log path"));
}

}  // namespace svqa
