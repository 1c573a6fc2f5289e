#include "models/video/frame_source.h"

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <utility>

#include "models/video/decode_ahead.h"
#include "models/video/npy.h"
#include "models/video/video_file.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

std::runtime_error source_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string size_text(int64_t width, int64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

// Frames of one size, appended one by one into a uint8 [capacity, H, W, 3] tensor sized from an
// estimate (a video's stated frame count) and grown when it was short: memory stays near one copy
// of the frames, where collecting them and stacking at the end would need two.
class FrameBuffer {
 public:
  FrameBuffer(int64_t height, int64_t width, int64_t expected)
      : frames_(at::empty({initial_capacity(height, width, expected), height, width, 3}, at::kByte)) {}

  void push(const at::Tensor& rgb) {
    if (count_ == frames_.size(0)) {
      at::Tensor bigger = at::empty({count_ + count_ / 2 + 1, frames_.size(1), frames_.size(2), 3}, at::kByte);
      bigger.narrow(0, 0, count_).copy_(frames_.narrow(0, 0, count_));
      frames_ = bigger;
    }
    frames_[count_++].copy_(rgb);
  }
  // A view when little capacity is unused, else a compact copy.
  at::Tensor take() {
    const at::Tensor used = frames_.narrow(0, 0, count_);
    return count_ * 4 >= frames_.size(0) * 3 ? used : used.clone();
  }

 private:
  // Stated frame counts can be wrong (0, or absurd for broken headers): trust them up to 2 GiB.
  static int64_t initial_capacity(int64_t height, int64_t width, int64_t expected) {
    const int64_t frame_bytes = std::max<int64_t>(height * width * 3, 1);
    return std::clamp<int64_t>(expected, 1, std::max<int64_t>(1, (int64_t{2} << 30) / frame_bytes));
  }

  at::Tensor frames_;
  int64_t count_ = 0;
};

// OpenCV logs decoder complaints to stderr; svqa reports its own one-line errors. Its own
// variable still turns the log on: OPENCV_LOG_LEVEL.
void quiet_opencv() {
  static const bool once = [] {
    if (!std::getenv("OPENCV_LOG_LEVEL")) cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    return true;
  }();
  (void)once;
}

// A source's sampled frames one at a time, RGB, with their times; every frame the size of the first.
class FrameDecoder {
 public:
  virtual ~FrameDecoder() = default;
  // The next frame, false at the end. Throws naming the source and frame.
  bool next(QueuedFrame& frame) {
    if (!decode(frame)) return false;
    const auto h = frame.rgb.size(0), w = frame.rgb.size(1);
    if (first_h_ && (h != first_h_ || w != first_w_)) throw size_error(size_text(w, h) + ", expected " + size_text(first_w_, first_h_));
    first_h_ = h, first_w_ = w;
    return true;
  }
  double fps = 0;          // rate of the frames it gives
  int64_t expected = 1;    // how many it will give, as far as the source says
  bool stamped_at_pts = true;  // whether each frame's stamp is its presentation time

 protected:
  virtual bool decode(QueuedFrame& frame) = 0;
  // The error for the current frame, whose size `what` ("WxH, expected WxH") is not the first's.
  virtual std::runtime_error size_error(const std::string& what) const = 0;
  int64_t first_h_ = 0, first_w_ = 0;
};

// A video file's frames as its selector keeps them.
class VideoDecoder final : public FrameDecoder {
 public:
  VideoDecoder(const std::string& path, const SelectorMaker& make_selector, int decode_threads = 0)
      : path_(path), file_(path, decode_threads) {
    selector_ = make_selector(file_.info());
    fps = selector_->fps;
    expected = selector_->expected;
  }
  VideoDecoder(const std::string& path, double target_fps, const VideoSampling& sampling, int decode_threads)
      : VideoDecoder(
            path,
            [&](const VideoInfo& info) {
              if (sampling.times == FrameTimes::Stride && !(std::isfinite(info.avg_fps) && info.avg_fps > 0))
                throw source_error(path, "the video states no frame rate (expected a positive average fps)");
              return frame_selector(sampling, target_fps, info);
            },
            decode_threads) {
    stamped_at_pts = sampling.times == FrameTimes::Presented;
  }

 private:
  bool decode(QueuedFrame& out) override {
    DecodedFrame frame;
    while (!selector_->finished() && file_.next(frame)) {
      index_ = frame.index;
      if (!selector_->keep(frame.index, frame.presented, out.stamp)) continue;
      out.rgb = file_.rgb();
      out.presented = frame.presented;
      ++given_;
      return true;
    }
    if (!given_) throw source_error(path_, "no frame could be decoded (expected a video; is the file corrupt?)");
    return false;
  }
  std::runtime_error size_error(const std::string& what) const override {
    return source_error(path_, "frame " + std::to_string(index_) + " is " + what + " as frame 0");
  }

  std::string path_;
  VideoFile file_;
  std::unique_ptr<FrameSelector> selector_;
  int64_t index_ = 0, given_ = 0;
};

bool is_image_file(const fs::path& p) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm"};
  const std::string ext = lower(p.extension().string());
  return std::any_of(std::begin(kExtensions), std::end(kExtensions), [&](const char* e) { return ext == e; });
}

// A directory's images sorted by name, already sampled: image i at i / target_fps.
class ImageDirectoryDecoder final : public FrameDecoder {
 public:
  ImageDirectoryDecoder(const std::string& dir, double target_fps) {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.' && is_image_file(entry.path()))
        files_.push_back(entry.path());
    if (files_.empty())
      throw source_error(dir, "no image files (expected .jpg, .jpeg, .png, .bmp, .webp, .tif, .tiff, .ppm or .pgm)");
    std::sort(files_.begin(), files_.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
    fps = target_fps;
    expected = static_cast<int64_t>(files_.size());
  }

 private:
  bool decode(QueuedFrame& out) override {
    if (next_ == files_.size()) return false;
    const auto& file = files_[next_];
    quiet_opencv();
    const cv::Mat bgr = cv::imread(file.string(), cv::IMREAD_COLOR);  // gray and alpha become 3-channel BGR
    if (bgr.empty()) throw source_error(file.string(), "cannot decode the image");
    out.rgb = at::empty({bgr.rows, bgr.cols, 3}, at::kByte);
    cv::Mat view(bgr.rows, bgr.cols, CV_8UC3, out.rgb.data_ptr());
    cv::cvtColor(bgr, view, cv::COLOR_BGR2RGB);
    out.stamp = out.presented = static_cast<double>(next_++) / fps;
    return true;
  }
  std::runtime_error size_error(const std::string& what) const override {
    return source_error(files_[next_ - 1].string(), "image is " + what + " as " + files_.front().filename().string() +
                                                       " (all frames one size)");
  }

  std::vector<fs::path> files_;
  size_t next_ = 0;
};

// Every frame of a decoder, in one buffer.
Frames read_all(FrameDecoder& decoder) {
  Frames out;
  out.fps = decoder.fps;
  std::unique_ptr<FrameBuffer> buffer;
  QueuedFrame frame;
  while (decoder.next(frame)) {
    if (!buffer) buffer = std::make_unique<FrameBuffer>(frame.rgb.size(0), frame.rgb.size(1), decoder.expected);
    buffer->push(frame.rgb);
    out.timestamps.push_back(frame.stamp);
    if (!decoder.stamped_at_pts) out.presented.push_back(frame.presented);
  }
  out.rgb = buffer->take();
  return out;
}

Frames read_npy_frames(const std::string& path, double target_fps) {
  Frames out;
  out.rgb = read_npy(path);
  const auto sizes = out.rgb.sizes();
  if (out.rgb.scalar_type() != at::kByte || out.rgb.dim() != 4 || sizes[3] != 3 || sizes[0] == 0 ||
      sizes[1] == 0 || sizes[2] == 0) {
    throw source_error(path, "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got " +
                                 std::string(c10::getDtypeNames(out.rgb.scalar_type()).first) + " " + c10::str(sizes));
  }
  out.fps = target_fps;
  for (int64_t i = 0; i < sizes[0]; ++i) out.timestamps.push_back(static_cast<double>(i) / target_fps);
  return out;
}

// The next decoded frame, prepared by `prepare` for a clip of `clip_frames` (on the prepare thread).
bool next_prepared(DecodeAhead& decoded, const FramePreparer& prepare, int64_t clip_frames, QueuedFrame& frame) {
  if (!decoded.pop(frame)) return false;
  try {
    frame.prepared = prepare(frame.rgb.unsqueeze(0), clip_frames);
  } catch (const std::exception&) {
    frame.prepared = at::Tensor();  // left to the reader's caller, which says what is wrong
  }
  return true;
}

// Frames [N, ...] of one tensor each: a single one as a view of its own (nothing copied, e.g. for
// `svqa frames --out`, which writes frame by frame), more stacked; undefined if any is undefined.
at::Tensor joined(const std::vector<at::Tensor>& each) {
  if (each.empty() || std::any_of(each.begin(), each.end(), [](const at::Tensor& t) { return !t.defined(); }))
    return at::Tensor();
  return each.size() == 1 ? each.front() : at::cat(each);
}

// Frames of a decoder that runs ahead on its own thread (DecodeAhead), as many taken from its
// queue as upcoming_time() looked at. With a preparer, preprocessing runs on a second thread of its
// own behind the decoder's, so that neither waits for the other (decoding a 720p frame and resizing
// it for the tower take about as long).
class DecodingReader final : public FrameReader {
 public:
  DecodingReader(std::unique_ptr<FrameDecoder> decoder, FramePreparer prepare)
      : decoder_(std::move(decoder)),
        prepare_(std::move(prepare)),
        stamped_at_pts_(decoder_->stamped_at_pts),
        decoded_([this](QueuedFrame& f) { return decoder_->next(f); }, prepare_ ? kHandOverBytes : kQueueBytes) {
    fps_ = decoder_->fps;
    expected_ = decoder_->expected;
    if (prepare_)
      prepared_ = std::make_unique<DecodeAhead>(
          [this](QueuedFrame& f) { return next_prepared(decoded_, prepare_, expected_, f); }, kQueueBytes);
  }
  std::optional<double> upcoming_time(int64_t k) override {
    while (static_cast<int64_t>(ahead_.size()) <= k && take_one()) {
    }
    if (static_cast<int64_t>(ahead_.size()) <= k) return std::nullopt;
    return ahead_[static_cast<size_t>(k)].stamp;
  }
  Frames read(int64_t count) override {
    (void)upcoming_time(count - 1);
    Frames out;
    out.fps = fps_;
    out.first = position_;
    std::vector<at::Tensor> rgb, prepared;
    for (int64_t i = 0; i < count && !ahead_.empty(); ++i) {
      QueuedFrame& f = ahead_.front();
      rgb.push_back(f.rgb.unsqueeze(0));
      prepared.push_back(std::move(f.prepared));
      out.timestamps.push_back(f.stamp);
      if (!stamped_at_pts_) out.presented.push_back(f.presented);
      ahead_.pop_front();
    }
    out.rgb = joined(rgb);
    if (prepare_) out.prepared = joined(prepared), out.prepared_clip_frames = expected_;
    position_ += static_cast<int64_t>(rgb.size());
    return out;
  }

 private:
  // Frames waiting for the reader, at most (720p: 48 frames), and, with a preparer, decoded frames
  // waiting for it (720p: 12).
  static constexpr int64_t kQueueBytes = int64_t{128} << 20, kHandOverBytes = int64_t{32} << 20;

  bool take_one() {
    QueuedFrame f;
    if (ended_ || !(prepared_ ? prepared_->pop(f) : decoded_.pop(f))) return !(ended_ = true);
    ahead_.push_back(std::move(f));
    return true;
  }

  std::unique_ptr<FrameDecoder> decoder_;
  const FramePreparer prepare_;
  const bool stamped_at_pts_;
  std::deque<QueuedFrame> ahead_;
  bool ended_ = false;
  DecodeAhead decoded_;                     // after the decoder: its thread stops before the decoder goes
  std::unique_ptr<DecodeAhead> prepared_;  // last: stops before the queue it reads from
};

// Frames already in memory, handed out in pieces (views).
class HeldReader final : public FrameReader {
 public:
  explicit HeldReader(Frames frames) : frames_(std::move(frames)) {
    fps_ = frames_.fps;
    expected_ = frames_.rgb.size(0);
  }
  std::optional<double> upcoming_time(int64_t k) override {
    if (position_ + k >= expected_) return std::nullopt;
    return frames_.timestamps[static_cast<size_t>(position_ + k)];
  }
  Frames read(int64_t count) override {
    const int64_t n = std::max<int64_t>(0, std::min(count, expected_ - position_));
    Frames out;
    out.fps = fps_;
    out.first = position_;
    if (n > 0) out.rgb = frames_.rgb.narrow(0, position_, n);
    out.timestamps.assign(frames_.timestamps.begin() + position_, frames_.timestamps.begin() + position_ + n);
    if (!frames_.presented.empty())
      out.presented.assign(frames_.presented.begin() + position_, frames_.presented.begin() + position_ + n);
    position_ += n;
    return out;
  }

 private:
  Frames frames_;
};

enum class SourceKind { Directory, Npy, Video };

SourceKind source_kind(const std::string& path, double target_fps) {
  if (!std::isfinite(target_fps) || target_fps <= 0)
    throw std::invalid_argument("target fps must be positive, got " + std::to_string(target_fps));
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw source_error(path, "file not found");
  if (fs::is_directory(status)) return SourceKind::Directory;
  return lower(fs::path(path).extension().string()) == ".npy" ? SourceKind::Npy : SourceKind::Video;
}

std::unique_ptr<FrameDecoder> open_decoder(const std::string& path, double target_fps, bool directory,
                                           const VideoSampling& sampling, int decode_threads = 0) {
  if (directory) return std::make_unique<ImageDirectoryDecoder>(path, target_fps);
  return std::make_unique<VideoDecoder>(path, target_fps, sampling, decode_threads);
}

}  // namespace

Frames read_frames(const std::string& path, double target_fps, const VideoSampling& sampling) {
  const SourceKind kind = source_kind(path, target_fps);
  if (kind == SourceKind::Npy) return read_npy_frames(path, target_fps);
  return read_all(*open_decoder(path, target_fps, kind == SourceKind::Directory, sampling));
}

std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, double target_fps, const VideoSampling& sampling,
                                               FramePreparer prepare, int decode_threads) {
  const SourceKind kind = source_kind(path, target_fps);
  if (kind == SourceKind::Npy) return held_frame_reader(read_npy_frames(path, target_fps));
  return std::make_unique<DecodingReader>(
      open_decoder(path, target_fps, kind == SourceKind::Directory, sampling, decode_threads), std::move(prepare));
}

std::unique_ptr<FrameReader> open_video_reader(const std::string& path, const SelectorMaker& selector) {
  (void)source_kind(path, 1.0);  // "file not found" as the others say it
  return std::make_unique<DecodingReader>(std::make_unique<VideoDecoder>(path, selector), FramePreparer());
}

std::unique_ptr<FrameReader> held_frame_reader(Frames frames) { return std::make_unique<HeldReader>(std::move(frames)); }

}  // namespace svqa
