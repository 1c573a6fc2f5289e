#include "core/memory/bank_entry.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/io/checksum.h"
#include "core/memory/spill_file.h"

namespace svqa {

void MemoryBank::Entry::write_spill(const std::string& path) {
  file = path;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw io_error(file, "cannot create spill file", errno);
  for (size_t l = 0; l < block.keys.size(); ++l)
    for (auto* t : {&block.keys[l], &block.values[l]}) {
      offsets.push_back(offsets.empty() ? 0 : offsets.back() + tensor_bytes_of(shapes.back(), dtypes.back()));
      shapes.push_back(t->defined() ? t->sizes().vec() : std::vector<int64_t>{});
      dtypes.push_back(t->defined() ? t->scalar_type() : at::kFloat);
      sums.push_back(t->defined() ? checksum64(t->data_ptr(), static_cast<size_t>(tensor_bytes(*t))) : 0);
      if (!t->defined()) continue;
      write_tensor(fd, *t, file);
      *t = at::Tensor();
    }
  if (::close(fd) != 0) throw io_error(file, "cannot close spill file", errno);
  file_bytes = bytes;
}

void MemoryBank::Entry::map_kv(KvBlock& out) const {
  const auto mapping = map_spilled(open_spilled(file, held.get(), file_bytes, external, growing), base, bytes, file);
  char* p = mapping->data;
  size_t i = 0;
  for (size_t l = 0; l < out.keys.size(); ++l)
    for (auto* t : {&out.keys[l], &out.values[l]}) {
      const size_t at = i++;
      const auto& shape = shapes[at];
      const auto dtype = dtypes[at];
      if (shape.empty()) continue;
      if (checksum64(p, static_cast<size_t>(tensor_bytes_of(shape, dtype))) != sums[at])
        throw_changed(file, external, "checksum differs");
      // MAP_PRIVATE pages are copy-on-write, so a caller writing to them never changes the file.
      *t = at::from_blob(p, shape, [mapping](void*) {}, at::TensorOptions().dtype(dtype));
      p += tensor_bytes(*t);
    }
}

void MemoryBank::Entry::read_spilled(size_t layer, const at::Tensor& k, const at::Tensor& v) const {
  const int fd = open_spilled(file, held.get(), file_bytes, external, growing);
  auto read_into = [&](size_t i, const at::Tensor& dst) {
    const auto dtype = dtypes[i];
    const bool direct = dst.is_cpu() && dst.is_contiguous() && dst.scalar_type() == dtype && dst.sizes().vec() == shapes[i];
    const at::Tensor buffer = direct ? dst : at::empty(shapes[i], at::TensorOptions().dtype(dtype).pinned_memory(dst.is_cuda()));
    read_tensor(fd, buffer, base + offsets[i], file, external);
    if (checksum64(buffer.data_ptr(), static_cast<size_t>(tensor_bytes(buffer))) != sums[i]) {
      ::close(fd);
      throw_changed(file, external, "checksum differs");
    }
    if (!direct) dst.copy_(buffer, /*non_blocking=*/buffer.is_pinned());
  };
  read_into(2 * layer, k);
  read_into(2 * layer + 1, v);
  ::close(fd);
}

}  // namespace svqa
