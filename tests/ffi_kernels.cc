// Small XLA FFI handlers that tests/test_ffi.py compiles (against fcore.ffi.include_dir()) and
// calls through fcore.ffi and jax.ffi. RmsNorm* are the kernels of JAX's FFI tutorial.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

template <typename T>
static T ComputeRmsNorm(float eps, int64_t size, const T *x, T *y) {
  T sm = static_cast<T>(0);
  for (int64_t n = 0; n < size; ++n) sm += x[n] * x[n];
  T scale = static_cast<T>(1) / std::sqrt(sm / static_cast<T>(size) + static_cast<T>(eps));
  for (int64_t n = 0; n < size; ++n) y[n] = x[n] * scale;
  return scale;
}

template <typename T>
static ffi::Error RmsNormTyped(float eps, ffi::AnyBuffer x, ffi::AnyBuffer *y, ffi::AnyBuffer *res) {
  auto dims = x.dimensions();
  if (dims.size() == 0) return ffi::Error::InvalidArgument("RmsNorm input must be an array");
  int64_t last = dims.back(), total = x.element_count();
  const T *xd = x.typed_data<T>();
  T *yd = y->typed_data<T>();
  for (int64_t n = 0, i = 0; n < total; n += last, ++i) {
    T s = ComputeRmsNorm(eps, last, xd + n, yd + n);
    if (res) res->typed_data<T>()[i] = s;
  }
  return ffi::Error::Success();
}

static ffi::Error RmsNormAny(float eps, ffi::AnyBuffer x, ffi::AnyBuffer *y, ffi::AnyBuffer *res) {
  switch (x.element_type()) {
    case ffi::F32: return RmsNormTyped<float>(eps, x, y, res);
    case ffi::F64: return RmsNormTyped<double>(eps, x, y, res);
    default: return ffi::Error::InvalidArgument("Unsupported input data type.");
  }
}

static ffi::Error RmsNormImpl(float eps, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  return RmsNormAny(eps, x, &*y, nullptr);
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind().Attr<float>("eps").Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());

static ffi::Error RmsNormFwdImpl(float eps, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                                 ffi::Result<ffi::AnyBuffer> res) {
  return RmsNormAny(eps, x, &*y, &*res);
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormFwd, RmsNormFwdImpl,
                              ffi::Ffi::Bind().Attr<float>("eps").Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());

static ffi::Error RmsNormBwdImpl(ffi::Buffer<ffi::F32> res, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> ct_y,
                                 ffi::ResultBuffer<ffi::F32> ct_x) {
  int64_t last = x.dimensions().back(), total = x.element_count();
  for (int64_t n = 0, i = 0; n < total; n += last, ++i) {
    float r = res.typed_data()[i], ct_res = 0;
    for (int64_t k = 0; k < last; ++k) ct_res += x.typed_data()[n + k] * ct_y.typed_data()[n + k];
    float factor = ct_res * r * r * r / static_cast<float>(last);
    for (int64_t k = 0; k < last; ++k)
      ct_x->typed_data()[n + k] = r * ct_y.typed_data()[n + k] - factor * x.typed_data()[n + k];
  }
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormBwd, RmsNormBwdImpl,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

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
