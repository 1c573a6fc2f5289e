#include "benchmarks/datasets/register_builtin.h"

#include <memory>

#include "benchmarks/datasets/cgbench.h"
#include "benchmarks/datasets/egoschema.h"
#include "benchmarks/datasets/lvbench.h"
#include "benchmarks/datasets/mlvu.h"
#include "benchmarks/datasets/ovobench.h"
#include "benchmarks/datasets/rvs.h"
#include "benchmarks/datasets/stream_list.h"
#include "benchmarks/datasets/streamingbench.h"
#include "benchmarks/datasets/streamingbench_proactive.h"
#include "benchmarks/datasets/streamingbench_sqa.h"
#include "benchmarks/datasets/videomme.h"

namespace svqa {

// Every built-in benchmark, one line each: registry.add<Options>(name, description, factory, SVQA_HERE).
void register_builtin_benchmarks(Registry<Benchmark>& registry) {
  registry.add<StreamListOptions>("stream_list", "svqa's own JSON: videos with questions at times",
      [](const StreamListOptions& o) { return std::make_unique<StreamList>(o); }, SVQA_HERE);
  registry.add<RvsOptions>("rvs_ego", "RVS-Ego: streaming open-ended QA on Ego4D (ReKV JSON, asked at end_time)",
      [](const RvsOptions& o) { return std::make_unique<Rvs>(o); }, SVQA_HERE);
  registry.add<RvsOptions>("rvs_movie", "RVS-Movie: streaming open-ended QA on MovieNet (.npy frames at 1 fps)",
      [](const RvsOptions& o) { return std::make_unique<Rvs>(o); }, SVQA_HERE);
  registry.add<StreamingBenchOptions>("streamingbench", "StreamingBench real-time: multiple choice asked at time_stamp",
      [](const StreamingBenchOptions& o) { return std::make_unique<StreamingBench>(o); }, SVQA_HERE);
  registry.add<OvoBenchOptions>("ovobench",
      "OVO-Bench: multiple choice at realtime; forward tasks asked once per probe (count, Yes/No)",
      [](const OvoBenchOptions& o) { return std::make_unique<OvoBench>(o); }, SVQA_HERE);
  registry.add<StreamingBenchOptions>("streamingbench_sqa",
      "StreamingBench SQA: a video's questions in order, each with the earlier ones and their answers as context",
      [](const StreamingBenchOptions& o) { return std::make_unique<StreamingBenchSqa>(o); }, SVQA_HERE);
  registry.add<StreamingBenchOptions>("streamingbench_proactive",
      "StreamingBench Proactive Output: polled once a second with a yes/no query, then asked on the first yes",
      [](const StreamingBenchOptions& o) { return std::make_unique<StreamingBenchProactive>(o); }, SVQA_HERE);
  registry.add<CgBenchOptions>("cgbench", "CG-Bench: offline multiple choice (5-8 options) with clue intervals",
      [](const CgBenchOptions& o) { return std::make_unique<CgBench>(o); }, SVQA_HERE);
  registry.add<LvBenchOptions>("lvbench", "LVBench: offline multiple choice on hour-long videos",
      [](const LvBenchOptions& o) { return std::make_unique<LvBench>(o); }, SVQA_HERE);
  registry.add<VideoMmeOptions>("videomme", "Video-MME: offline multiple choice, one duration split (long)",
      [](const VideoMmeOptions& o) { return std::make_unique<VideoMme>(o); }, SVQA_HERE);
  registry.add<MlvuOptions>("mlvu", "MLVU dev: offline multiple choice, seven tasks (M-Avg)",
      [](const MlvuOptions& o) { return std::make_unique<Mlvu>(o); }, SVQA_HERE);
  registry.add<EgoSchemaOptions>("egoschema", "EgoSchema: offline multiple choice on 3-minute clips (subset answers)",
      [](const EgoSchemaOptions& o) { return std::make_unique<EgoSchema>(o); }, SVQA_HERE);
}

}  // namespace svqa
