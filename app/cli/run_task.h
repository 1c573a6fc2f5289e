#pragma once
// One task of `svqa run` / `svqa grid`: a run, or one stream shard of it, in its folder.

#include <string>

#include "core/config/experiment.h"
#include "engine/registries.h"
#include "app/run/shard/stream_shard.h"

namespace svqa {

// "i/N" from the command line (--shard); throws UsageError for anything else. A count above the
// run's streams is refused by run_task, which knows them.
StreamShard shard_option(const std::string& text);

// Locks the folder (a shard: its own part of it), answers the streams, and closes the run: a whole
// run as run_streams does; a shard by merging when it is the last to finish. `command` names the
// lock's holder. Returns the number of questions that errored; throws what RunFolder and
// run_streams throw, a shard count above the run's streams, and, after the run, one line when
// questions faulted (their input unreadable: the run is not closed, a rerun asks them again).
int run_task(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, const StreamShard& shard,
             const std::string& command);

}  // namespace svqa
