#pragma once
// EgoSchema (egoschema/EgoSchema), offline, 5 options on 3-minute clips. `questions.json`
// [{q_uid, question, "option 0" … "option 4"}] with answers only for the 500-question subset
// (`subset_answers.json` {q_uid: index}); ReKV's `full.json` (ReKV-style, answer null) is read too.
// Each question is its own stream, video `<q_uid><video_extension>`; id = q_uid. The full set is
// scored by the EgoSchema server; locally only the subset. Asked and parsed with ReKV's rule.

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct EgoSchemaOptions {
  std::string annotations;
  std::string answers;
  std::string video_root;
  std::string video_extension = ".mp4";
  bool subset_only = true;
  static void declare(Schema<EgoSchemaOptions>& s) {
    s.field("annotations", &EgoSchemaOptions::annotations, "questions.json (or ReKV's full.json)")
        .required().must_exist("file");
    s.field("answers", &EgoSchemaOptions::answers, "subset_answers.json; empty: no gold answers");
    s.field("video_root", &EgoSchemaOptions::video_root, "directory of <q_uid><video_extension>; empty: the file's own")
        .must_exist("directory");
    s.field("video_extension", &EgoSchemaOptions::video_extension, "appended to q_uid");
    s.field("subset_only", &EgoSchemaOptions::subset_only, "with answers: keep only the questions that have one");
  }
};

class EgoSchema final : public AnnotatedBenchmark {
 public:
  explicit EgoSchema(EgoSchemaOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;

 private:
  EgoSchemaOptions options_;
};

}  // namespace svqa
