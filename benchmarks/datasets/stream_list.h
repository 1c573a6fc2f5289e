#pragma once
// `stream_list`: svqa's own minimal annotation format, for custom videos and the demo.
//
//   {"streams": [{"id": "kitchen", "video": "kitchen.mp4",
//                 "questions": [{"id": "q1", "time": 42.0, "question": "...",
//                                "options": ["a", "b"], "answer": "a", "category": "..."}]}]}
// `video` is relative to `video_root` (default: the annotation file's directory).

#include <string>
#include <vector>

#include "benchmarks/datasets/answer_parsing.h"
#include "core/config/schema.h"

namespace svqa {

struct StreamListOptions {
  std::string annotations;
  std::string video_root;
  static void declare(Schema<StreamListOptions>& s) {
    s.field("annotations", &StreamListOptions::annotations, "the JSON file").required().must_exist("file");
    s.field("video_root", &StreamListOptions::video_root, "directory videos are relative to; empty: the file's own")
        .must_exist("directory");
  }
};

class StreamList final : public RuleBenchmark {
 public:
  explicit StreamList(StreamListOptions options) : options_(std::move(options)) {}
  std::vector<Stream> streams() override;

 private:
  StreamListOptions options_;
};

}  // namespace svqa
