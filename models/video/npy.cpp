#include "models/video/npy.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "core/io/atomic_file.h"

namespace svqa {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct Dtype {
  const char* descr;  // as numpy writes it
  at::ScalarType type;
};
constexpr Dtype kDtypes[] = {{"|u1", at::kByte}, {"<f4", at::kFloat}, {"<i8", at::kLong}};
static_assert(sizeof(float) == 4 && sizeof(int64_t) == 8);

std::runtime_error npy_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// Returns the text after `'key':`, or throws.
std::string field_after(const std::string& header, const std::string& key, const std::string& path) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) throw npy_error(path, "npy header has no '" + key + "' (header: " + header + ")");
  const size_t colon = header.find(':', at);
  if (colon == std::string::npos) throw npy_error(path, "npy header: no value for '" + key + "'");
  return header.substr(header.find_first_not_of(' ', colon + 1));
}

at::ScalarType parse_descr(const std::string& header, const std::string& path) {
  const std::string rest = field_after(header, "descr", path);
  const size_t close = rest.find('\'', 1);
  if (rest.empty() || rest[0] != '\'' || close == std::string::npos)
    throw npy_error(path, "npy header: 'descr' is not a string");
  const std::string descr = rest.substr(1, close - 1);
  // '|' (no byte order), '<' (little-endian) and '=' (native, little-endian here) are all fine.
  const bool little = descr.size() == 3 && (descr[0] == '|' || descr[0] == '<' || descr[0] == '=');
  for (const auto& d : kDtypes)
    if (little && descr.compare(1, 2, d.descr + 1) == 0) return d.type;
  throw npy_error(path, "dtype '" + descr + "' is not supported (expected uint8 '|u1', float32 '<f4' or int64 '<i8')");
}

// A tuple of non-negative integers: "(2, 3)", "(5,)", "()". Anything else (a sign, a number past
// int64) is an error rather than a silently different shape.
std::vector<int64_t> parse_shape(const std::string& header, const std::string& path) {
  const std::string rest = field_after(header, "shape", path);
  const size_t close = rest.find(')');
  if (rest.empty() || rest[0] != '(' || close == std::string::npos)
    throw npy_error(path, "npy header: 'shape' is not a tuple");
  const std::string inside = rest.substr(1, close - 1);
  const auto bad = [&] {
    return npy_error(path, "npy header: 'shape' (" + inside + ") must hold non-negative integers below 2^63");
  };
  std::vector<int64_t> shape;
  for (size_t pos = 0; pos < inside.size();) {
    const char c = inside[pos];
    if (c == ' ' || c == ',' || c == 'L') {  // 'L': Python 2's long suffix, written by old numpy
      ++pos;
      continue;
    }
    if (c < '0' || c > '9') throw bad();
    int64_t value = 0;
    for (; pos < inside.size() && inside[pos] >= '0' && inside[pos] <= '9'; ++pos) {
      const int digit = inside[pos] - '0';
      if (value > (INT64_MAX - digit) / 10) throw bad();
      value = value * 10 + digit;
    }
    shape.push_back(value);
  }
  return shape;
}

// Bytes the array holds, or nullopt when the product does not fit in 63 bits.
std::optional<uint64_t> data_bytes(const std::vector<int64_t>& shape, size_t item) {
  uint64_t n = item;
  for (const int64_t d : shape) {
    if (d == 0) return 0;
    if (n > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

}  // namespace

at::Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw npy_error(path, "cannot open file");
  char preamble[kMagicSize + 2];
  if (!in.read(preamble, sizeof preamble) || std::memcmp(preamble, kMagic, kMagicSize) != 0)
    throw npy_error(path, "not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(preamble[kMagicSize]);
  if (major < 1 || major > 3)
    throw npy_error(path, "npy format version " + std::to_string(major) + " is not supported");
  // Sizes below are checked against the file before anything is allocated: a header may claim anything.
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw npy_error(path, "cannot read the file size: " + ec.message());
  // Version 1 stores the header length in 2 bytes, versions 2 and 3 in 4 (little-endian).
  const size_t len_size = major == 1 ? 2 : 4;
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  if (!in.read(reinterpret_cast<char*>(len_bytes), static_cast<std::streamsize>(len_size)))
    throw npy_error(path, "truncated npy header");
  const size_t header_len = len_bytes[0] | len_bytes[1] << 8 | static_cast<size_t>(len_bytes[2]) << 16 |
                            static_cast<size_t>(len_bytes[3]) << 24;
  const uint64_t data_offset = sizeof preamble + len_size + header_len;
  if (data_offset > file_size)
    throw npy_error(path, "truncated npy header: it claims " + std::to_string(header_len) + " bytes, the file has " +
                              std::to_string(file_size) + " in all");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) throw npy_error(path, "truncated npy header");

  const at::ScalarType type = parse_descr(header, path);
  if (field_after(header, "fortran_order", path).rfind("False", 0) != 0)
    throw npy_error(path,
                    "Fortran-order arrays are not supported (expected fortran_order False; save a C-order array)");
  const std::vector<int64_t> shape = parse_shape(header, path);
  const auto bytes = data_bytes(shape, c10::elementSize(type));
  if (!bytes)
    throw npy_error(path, "npy header: shape " + c10::str(at::IntArrayRef(shape)) + " holds more than 2^63 bytes");
  if (*bytes > file_size - data_offset)
    throw npy_error(path, "truncated: the header promises " + std::to_string(*bytes) + " bytes of data, the file has " +
                              std::to_string(file_size - data_offset));

  at::Tensor array = at::empty(shape, at::TensorOptions().dtype(type));
  if (!in.read(static_cast<char*>(array.data_ptr()), static_cast<std::streamsize>(*bytes)))
    throw npy_error(path, "read error after " + std::to_string(in.gcount()) + " of " + std::to_string(*bytes) +
                              " bytes of data");
  return array;
}

namespace {

const Dtype& dtype_of(const std::string& path, at::ScalarType type) {
  for (const auto& d : kDtypes)
    if (type == d.type) return d;
  throw npy_error(path, "cannot write dtype " + std::string(c10::getDtypeNames(type).first) +
                            " (expected uint8, float32 or int64)");
}

// Magic, version 1.0 and the header of an array of `dtype` and `sizes`, padded with spaces so the
// data starts on a 64-byte boundary (and `room` more, for a count patched in later); ends with '\n'.
std::string npy_preamble(const std::string& path, const Dtype& dtype, at::IntArrayRef sizes, size_t room = 0) {
  std::string shape;  // a Python tuple: (), (5,), (2, 3)
  for (int64_t d : sizes) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  if (sizes.size() == 1) shape += ",";
  std::string header = std::string("{'descr': '") + dtype.descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  header.append(room, ' ');
  const size_t unpadded = kMagicSize + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535) throw npy_error(path, "array has too many dimensions for an npy 1.0 header");
  std::string content(kMagic, kMagicSize);
  content += '\x01';
  content += '\x00';
  content += static_cast<char>(header.size() & 0xFF);
  content += static_cast<char>(header.size() >> 8);
  return content + header;
}

// Digits a count can take beyond those of 0.
constexpr size_t kCountRoom = 19;

}  // namespace

void write_npy(const std::string& path, const at::Tensor& array) {
  const Dtype& dtype = dtype_of(path, array.scalar_type());
  const at::Tensor data = array.to(at::kCPU).contiguous();
  std::string content = npy_preamble(path, dtype, data.sizes());
  content.append(static_cast<const char*>(data.data_ptr()), data.nbytes());
  write_file_atomically(path, content);
}

NpyWriter::NpyWriter(std::string path)
    : path_(std::move(path)), temporary_(path_ + ".tmp." + std::to_string(::getpid())) {
  remove_stale_temporaries(path_);
  std::error_code ec;
  const auto parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (!file_) throw npy_error(path_, std::string("cannot write: ") + std::strerror(errno));
}

NpyWriter::~NpyWriter() {
  if (!file_) return;
  std::fclose(file_);
  std::remove(temporary_.c_str());
}

void NpyWriter::append(const at::Tensor& rows) {
  const at::Tensor data = rows.to(at::kCPU).contiguous();
  if (!rows_) {
    dtype_ = data.scalar_type();
    row_shape_ = data.sizes().slice(1).vec();
    write(npy_preamble(path_, dtype_of(path_, dtype_), shape(0), kCountRoom));
  } else if (data.scalar_type() != dtype_ || data.sizes().slice(1).vec() != row_shape_) {
    throw npy_error(path_, "rows of " + c10::str(data.sizes()) + " after rows of " + c10::str(shape(rows_)));
  }
  write(data.data_ptr(), data.nbytes());  // from the tensor's memory: no copy of the rows
  rows_ += data.size(0);
  start_writeback();
}

// The kernel is asked to start writing what was appended every 64 MiB, rather than when its dirty
// pages reach a share of RAM: finish()'s fsync then waits for the last stretch only (an hour of
// 720p at 1 fps is 10 GB; left to the kernel, several GB of it were still to write at the end). The
// stretch before, written by then, leaves the page cache: 10 GB of pages nobody reads again would
// otherwise push out others and make the kernel reclaim them in this process's time.
void NpyWriter::start_writeback() {
  constexpr int64_t kStretch = int64_t{64} << 20;
  const auto written = static_cast<int64_t>(std::ftell(file_));
  if (written - written_back_ < kStretch) return;
#ifdef __linux__
  if (std::fflush(file_) != 0) throw npy_error(path_, std::string("cannot write: ") + std::strerror(errno));
  const int fd = ::fileno(file_);
  (void)::sync_file_range(fd, written_back_, written - written_back_, SYNC_FILE_RANGE_WRITE);
  if (dropped_ < written_back_) {
    (void)::sync_file_range(fd, dropped_, written_back_ - dropped_,
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    (void)::posix_fadvise(fd, dropped_, written_back_ - dropped_, POSIX_FADV_DONTNEED);
    dropped_ = written_back_;
  }
#endif
  written_back_ = written;
}

void NpyWriter::finish() {
  if (!rows_) throw npy_error(path_, "nothing to write");
  const std::string preamble = npy_preamble(path_, dtype_of(path_, dtype_), shape(0), kCountRoom);
  // The same length as the one written first: the count's digits take some of its room.
  const std::string patched = npy_preamble(path_, dtype_of(path_, dtype_), shape(rows_),
                                           kCountRoom - (std::to_string(rows_).size() - 1));
  if (patched.size() != preamble.size()) throw std::logic_error("npy writer: the header changed length");
  if (std::fseek(file_, 0, SEEK_SET) != 0) throw npy_error(path_, "cannot seek to patch the header");
  write(patched);
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed || std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    std::remove(temporary_.c_str());
    throw npy_error(path_, std::string("cannot write: ") + std::strerror(errno));
  }
}

std::vector<int64_t> NpyWriter::shape(int64_t rows) const {
  std::vector<int64_t> out{rows};
  out.insert(out.end(), row_shape_.begin(), row_shape_.end());
  return out;
}

void NpyWriter::write(const std::string& bytes) { write(bytes.data(), bytes.size()); }

void NpyWriter::write(const void* data, size_t size) {
  if (std::fwrite(data, 1, size, file_) != size) throw npy_error(path_, std::string("cannot write: ") + std::strerror(errno));
}

}  // namespace svqa
