// Small XLA FFI handlers that tests/test_ffi.py compiles (appended to docs/ffi.md's RMS norm
// kernels, against fcore.ffi.include_dir()) and calls through fcore.ffi and jax.ffi.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// Writes its typed attributes into a float64 vector, to check how each Python value is typed:
// [i64, i32, u8, f64, f32, flag, len(name), sum(ints), ints.size()].
static ffi::Error AttrsImpl(int64_t i64, int32_t i32, uint8_t u8, double f64, float f32, bool flag,
                            std::string_view name, ffi::Span<const int64_t> ints, ffi::ResultBuffer<ffi::F64> out) {
  double *o = out->typed_data();
  if (out->element_count() != 9) return ffi::Error::InvalidArgument("Attrs returns 9 values");
  int64_t sum = 0;
  for (int64_t v : ints) sum += v;
  double vals[9] = {double(i64), double(i32), double(u8), f64, double(f32), flag ? 1.0 : 0.0,
                    double(name.size()), double(sum), double(ints.size())};
  std::memcpy(o, vals, sizeof(vals));
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Attrs, AttrsImpl,
                              ffi::Ffi::Bind().Attr<int64_t>("i64").Attr<int32_t>("i32").Attr<uint8_t>("u8")
                                  .Attr<double>("f64").Attr<float>("f32").Attr<bool>("flag")
                                  .Attr<std::string_view>("name").Attr<ffi::Span<const int64_t>>("ints")
                                  .Ret<ffi::Buffer<ffi::F64>>());

// Copies the bytes of its operand as they lie in memory (so the result shows the layout XLA
// gave the operand), and adds one to each element of its second operand in place (aliased).
static ffi::Error RawCopyImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  std::memcpy(y->untyped_data(), x.untyped_data(), x.size_bytes());
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(RawCopy, RawCopyImpl, ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());

static ffi::Error AddOneImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (int64_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i] + 1.0f;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(AddOne, AddOneImpl,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

// A side effect: counts its calls (read back with ffi_test_calls()).
static int64_t calls = 0;
static ffi::Error CountImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  ++calls;
  std::memcpy(y->typed_data(), x.typed_data(), x.size_bytes());
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Count, CountImpl,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
extern "C" int64_t ffi_test_calls() { return calls; }

// Fills its result with the element counts of its two operands, alternately: shows what
// operands vmap handed the kernel.
static ffi::Error SizesImpl(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::ResultBuffer<ffi::F32> out) {
  for (int64_t i = 0; i < out->element_count(); ++i)
    out->typed_data()[i] = static_cast<float>(i % 2 == 0 ? a.element_count() : b.element_count());
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Sizes, SizesImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Arg<ffi::AnyBuffer>().Ret<ffi::Buffer<ffi::F32>>());
