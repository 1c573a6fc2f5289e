#include "models/video/video_file.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace svqa {
namespace {

std::runtime_error video_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

// FFmpeg logs decoder complaints to stderr; svqa reports its own one-line errors.
// SVQA_FFMPEG_LOGLEVEL (an AV_LOG_* number, e.g. 24 = warnings) turns them back on.
void quiet_ffmpeg() {
  static const bool once = [] {
    const char* level = std::getenv("SVQA_FFMPEG_LOGLEVEL");
    av_log_set_level(level ? std::atoi(level) : AV_LOG_QUIET);
    return true;
  }();
  (void)once;
}

// The turn FFmpeg's autorotate applies (fftools' get_rotation and the filters it inserts).
enum class Turn { None, Clock, CClock, ClockFlip, CClockFlip, HFlip, VFlip, HVFlip };

const int32_t* display_matrix(const AVStream* st) {
#if LIBAVFORMAT_VERSION_MAJOR >= 61
  const AVPacketSideData* sd = av_packet_side_data_get(st->codecpar->coded_side_data,
                                                       st->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
  return sd && sd->size >= 36 ? reinterpret_cast<const int32_t*>(sd->data) : nullptr;
#else
  size_t size = 0;
  const uint8_t* sd = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
  return sd && size >= 36 ? reinterpret_cast<const int32_t*>(sd) : nullptr;
#endif
}

// fftools/ffmpeg_filter.c: theta = -round(av_display_rotation_get(m)) in [0, 360), then transpose
// (90, 270: flipped when m[3] says so), hflip/vflip (180), vflip (0 with m[4] < 0). The legacy
// `rotate` tag (degrees clockwise) stands for a plain rotation where there is no matrix.
Turn turn_of(const AVStream* st, const std::string& path, int& degrees) {
  int32_t tagged[9];
  const int32_t* m = display_matrix(st);
  if (!m) {
    const AVDictionaryEntry* tag = av_dict_get(st->metadata, "rotate", nullptr, 0);
    if (!tag || !*tag->value) return degrees = 0, Turn::None;
    av_display_rotation_set(tagged, -std::atof(tag->value));
    m = tagged;
  }
  double theta = -std::round(av_display_rotation_get(m));
  if (std::isnan(theta)) theta = 0;  // a degenerate matrix: FFmpeg turns nothing either
  theta -= 360 * std::floor(theta / 360 + 0.9 / 360);
  degrees = static_cast<int>(std::lround(theta)) % 360;
  if (std::fabs(theta - 90) < 1.0) return m[3] > 0 ? Turn::CClockFlip : Turn::Clock;
  if (std::fabs(theta - 180) < 1.0) {
    if (m[0] < 0 && m[4] < 0) return Turn::HVFlip;
    return m[0] < 0 ? Turn::HFlip : m[4] < 0 ? Turn::VFlip : Turn::None;
  }
  if (std::fabs(theta - 270) < 1.0) return m[3] < 0 ? Turn::ClockFlip : Turn::CClock;
  if (std::fabs(theta) > 1.0)
    throw video_error(path, "the display matrix turns the picture by " + std::to_string(theta) +
                                " degrees (expected a multiple of 90)");
  return m[4] < 0 ? Turn::VFlip : Turn::None;
}

// swscale's flags for a frame of `format` and `width` to RGB: point-sampled chroma, as PyAV and ffmpeg
// convert. 4:2:0 and 4:2:2 frames whose width is a multiple of 8 take swscale's SIMD converter, which
// PyAV's to_ndarray takes (7x faster than the accurate path on 720p; docs/performance.md); other
// widths and formats take the accurate path, since FFmpeg 5.1's SIMD converter leaves a row's last
// width % 8 pixels unwritten. Either way within 2 levels of PyAV with subsampled
// chroma, and equal to it with full chroma (tests/python/test_video_files.py).
int conversion_flags_for(AVPixelFormat format, int width) {
  const bool simd = (format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUV422P) && width % 8 == 0;
  return simd ? SWS_POINT : SWS_POINT | SWS_ACCURATE_RND;
}

// `rgb` [H, W, 3] turned as FFmpeg's transpose / hflip / vflip filters turn it.
at::Tensor turned(const at::Tensor& rgb, Turn turn) {
  switch (turn) {
    case Turn::None: return rgb;
    case Turn::Clock: return at::rot90(rgb, -1, {0, 1}).contiguous();
    case Turn::CClock: return at::rot90(rgb, 1, {0, 1}).contiguous();
    case Turn::ClockFlip: return at::rot90(rgb, -1, {0, 1}).flip({0});  // flip returns a new contiguous tensor
    case Turn::CClockFlip: return rgb.transpose(0, 1).contiguous();
    case Turn::HFlip: return rgb.flip({1});
    case Turn::VFlip: return rgb.flip({0});
    case Turn::HVFlip: return rgb.flip({0, 1});
  }
  return rgb;
}

}  // namespace

struct VideoFile::State {
  std::string path;
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  SwsContext* sws = nullptr;
  AVPacket* packet = nullptr;
  AVFrame* frame = nullptr;
  int stream = -1;
  AVRational time_base{0, 1};
  int64_t start = 0;
  Turn turn = Turn::None;
  int64_t interval = 1;  // one frame at the average rate, in the time base (for frames without a time)
  int64_t decoded = 0;
  int64_t last_ts = AV_NOPTS_VALUE;
  bool draining = false, done = false;

  ~State() {
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
  }

  // Feeds packets until the decoder gives a frame; false at the end.
  bool receive() {
    while (!done) {
      const int got = avcodec_receive_frame(codec, frame);
      if (got == 0) return true;
      if (got == AVERROR_EOF || draining) done = true;  // drained (or failing while drained: the end)
      else feed();  // it wants packets, or could not decode a frame: the next packets
    }
    return false;
  }
  void feed() {
    for (;;) {
      const int read = av_read_frame(format, packet);
      if (read < 0) {  // the end, or a file cut short: what was read is decoded
        draining = true;
        avcodec_send_packet(codec, nullptr);
        return;
      }
      const bool ours = packet->stream_index == stream;
      const int sent = ours ? avcodec_send_packet(codec, packet) : 0;
      av_packet_unref(packet);
      if (ours && sent == 0) return;  // a packet the decoder refuses (damaged) is skipped
    }
  }
  // The frame's time stamp in the stream's time base: its best-effort PTS, else after the last one.
  int64_t stamp() {
    int64_t ts = frame->best_effort_timestamp;
    if (ts == AV_NOPTS_VALUE) ts = frame->pts;
    if (ts == AV_NOPTS_VALUE) ts = last_ts == AV_NOPTS_VALUE ? start : last_ts + interval;
    return last_ts = ts;
  }
  int conversion_flags() const { return conversion_flags_for(static_cast<AVPixelFormat>(frame->format), frame->width); }
  at::Tensor to_rgb() {
    sws = sws_getCachedContext(sws, frame->width, frame->height, static_cast<AVPixelFormat>(frame->format),
                               frame->width, frame->height, AV_PIX_FMT_RGB24, conversion_flags(), nullptr, nullptr,
                               nullptr);
    if (!sws)
      throw video_error(path, std::string("cannot convert pixel format ") +
                                  av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame->format)) + " to RGB");
    // The frame's own matrix and range, as FFmpeg's scale filter takes them.
    const int* coefficients = sws_getCoefficients(frame->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT
                                                                                           : frame->colorspace);
    int* inv = nullptr;
    int* table = nullptr;
    int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    if (sws_getColorspaceDetails(sws, &inv, &src_range, &table, &dst_range, &brightness, &contrast, &saturation) >= 0)
      sws_setColorspaceDetails(sws, coefficients, frame->color_range == AVCOL_RANGE_JPEG, table, dst_range,
                               brightness, contrast, saturation);
    at::Tensor rgb = at::empty({frame->height, frame->width, 3}, at::kByte);
    uint8_t* dst[4] = {rgb.data_ptr<uint8_t>(), nullptr, nullptr, nullptr};
    int dst_stride[4] = {frame->width * 3, 0, 0, 0};
    sws_scale(sws, frame->data, frame->linesize, 0, frame->height, dst, dst_stride);
    return turned(rgb, turn);
  }
};

VideoFile::VideoFile(const std::string& path, int decode_threads) : state_(std::make_unique<State>()) {
  quiet_ffmpeg();
  State& s = *state_;
  s.path = path;
  if (avformat_open_input(&s.format, path.c_str(), nullptr, nullptr) < 0 ||
      avformat_find_stream_info(s.format, nullptr) < 0)
    throw video_error(path, "cannot open as a video (expected a file FFmpeg can decode)");
  const AVCodec* decoder = nullptr;
  s.stream = av_find_best_stream(s.format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
  if (s.stream < 0 || !decoder) throw video_error(path, "holds no video stream FFmpeg can decode");
  AVStream* st = s.format->streams[s.stream];
  s.codec = avcodec_alloc_context3(decoder);
  s.packet = av_packet_alloc();
  s.frame = av_frame_alloc();
  if (!s.codec || !s.packet || !s.frame) throw std::bad_alloc();
  s.codec->thread_count = decode_threads;  // 0: FFmpeg picks
  if (avcodec_parameters_to_context(s.codec, st->codecpar) < 0 || avcodec_open2(s.codec, decoder, nullptr) < 0)
    throw video_error(path, std::string("cannot open the ") + decoder->name + " decoder");
  s.time_base = st->time_base;
  s.start = st->start_time == AV_NOPTS_VALUE ? 0 : st->start_time;
  s.turn = turn_of(st, path, info_.rotation);
  AVRational rate = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? st->avg_frame_rate : st->r_frame_rate;
  info_.avg_fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
  if (info_.avg_fps > 0) s.interval = std::max<int64_t>(1, std::llround(1.0 / (info_.avg_fps * av_q2d(s.time_base))));
  if (st->duration != AV_NOPTS_VALUE) info_.duration = static_cast<double>(st->duration) * av_q2d(st->time_base);
  else if (s.format->duration != AV_NOPTS_VALUE) info_.duration = static_cast<double>(s.format->duration) / AV_TIME_BASE;
  info_.frames = st->nb_frames > 0 ? st->nb_frames : static_cast<int64_t>(std::llround(info_.duration * info_.avg_fps));
}

VideoFile::~VideoFile() = default;

bool VideoFile::next(DecodedFrame& out) {
  State& s = *state_;
  av_frame_unref(s.frame);
  out.rgb = at::Tensor();
  if (!s.receive()) return false;
  const int64_t ts = s.stamp();
  out.presented = static_cast<double>(ts - s.start) * s.time_base.num / s.time_base.den;
  out.index = s.decoded++;
  return true;
}

at::Tensor VideoFile::rgb() { return state_->to_rgb(); }

}  // namespace svqa
