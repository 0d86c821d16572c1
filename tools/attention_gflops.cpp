// attention_gflops: the double-precision attention reference's GFLOPS on a causal prefill
// (default: the 2048-token case of cases/aclnn.FusedInferAttentionScoreV3/prefill_2048.json,
// 32 query / 8 kv heads, head_dim 128) beside OpenBLAS dgemm's GFLOPS on the same machine
// in the same run, and their ratio (issue 14 asks for at least 25%).
//
// OpenBLAS is loaded at run time (dlopen libopenblas.so.0: Debian's libopenblas0-pthread),
// so it is no build dependency; without it the program says so and prints the reference's
// figure alone. --naive also times the old one-row-at-a-time loop (main before the blocked
// reference) on one kv head, for a before/after figure from the same binary.
//
//   build/attention_gflops [--threads N] [--seq S] [--heads H] [--kv-heads HK] [--dim D]
//                          [--gemm N] [--naive]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "ref/attention.hpp"

using namespace kvbench;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The reference before issue 14 (src/ref/attention.cpp at 0c26506), one row at a time.
void naive_row(int64_t kv_len, int64_t dk, int64_t dv, double scale, const double* q, const double* k,
               int64_t ks, const double* v, int64_t vs, double* out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> p(static_cast<size_t>(kv_len));
  double m = -kInf;
  for (int64_t t = 0; t < kv_len; ++t) {
    double dot = 0;
    for (int64_t d = 0; d < dk; ++d) dot += q[d] * k[t * ks + d];
    p[t] = dot * scale;
    m = std::max(m, p[t]);
  }
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - m));
  for (double& x : p) x /= sum;
  std::fill(out, out + dv, 0.0);
  for (int64_t t = 0; t < kv_len; ++t)
    for (int64_t d = 0; d < dv; ++d) out[d] += p[t] * v[t * vs + d];
}

using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                       double*, int);
using SetThreads = void (*)(int);

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int64_t S = 2048, H = 32, Hk = 8, D = 128, n = 2048;
  bool naive = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atoll(argv[++i]);
    };
    if (a == "--threads")
      threads = static_cast<unsigned>(next());
    else if (a == "--seq")
      S = next();
    else if (a == "--heads")
      H = next();
    else if (a == "--kv-heads")
      Hk = next();
    else if (a == "--dim")
      D = next();
    else if (a == "--gemm")
      n = next();
    else if (a == "--naive")
      naive = true;
    else {
      std::fprintf(
          stderr,
          "usage: %s [--threads N] [--seq S] [--heads H] [--kv-heads HK] [--dim D] [--gemm N] [--naive]\n",
          argv[0]);
      return 2;
    }
  }
  if (threads < 1 || S < 1 || H < 1 || Hk < 1 || H % Hk || D < 1 || n < 1) {
    std::fprintf(stderr, "bad sizes\n");
    return 2;
  }
  const int64_t G = H / Hk;
  const CounterRng rng(1123, "attention_gflops");
  std::vector<double> q(static_cast<size_t>(S * H * D)), k(static_cast<size_t>(S * Hk * D)), v(k.size());
  for (size_t i = 0; i < q.size(); ++i) q[i] = rng.uniform(i, -1, 1);
  for (size_t i = 0; i < k.size(); ++i)
    k[i] = rng.uniform(q.size() + i, -1, 1), v[i] = rng.uniform(2 * q.size() + i, -1, 1);
  std::vector<double> out(q.size());

  // The reference: per kv head, its G heads' causal rows (position-major, as the operators do).
  const double pairs = static_cast<double>(H) * static_cast<double>(S) * static_cast<double>(S + 1) / 2;
  const double flops = attention_flops(pairs, D, D);
  const AttentionBlock a{
      .dk = D, .dv = D, .scale = 1 / std::sqrt(static_cast<double>(D)), .threads = threads};
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t hk = 0; hk < Hk; ++hk) {
    std::vector<QueryRow> rows;
    for (int64_t i = 0; i < S; ++i)
      for (int64_t h = hk * G; h < (hk + 1) * G; ++h)
        rows.push_back({&q[(i * H + h) * D], 0, i + 1, &out[(i * H + h) * D]});
    attend(a, rows, {&k[hk * D], Hk * D}, {&v[hk * D], Hk * D}, nullptr);
  }
  const double ref_s = seconds_since(t0), ref_gflops = flops / ref_s * 1e-9;
  std::printf(
      "reference: causal prefill S=%lld H=%lld/%lld D=%lld, %u threads: %.2f GFLOP in %.3f s = %.2f GFLOPS\n",
      static_cast<long long>(S), static_cast<long long>(H), static_cast<long long>(Hk),
      static_cast<long long>(D), threads, flops * 1e-9, ref_s, ref_gflops);

  if (naive) {  // kv head 0 only, one thread (the old loop had none)
    std::vector<double> o(static_cast<size_t>(D));
    t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < S; ++i)
      for (int64_t h = 0; h < G; ++h)
        naive_row(i + 1, D, D, a.scale, &q[(i * H + h) * D], k.data(), Hk * D, v.data(), Hk * D, o.data());
    const double s = seconds_since(t0), gf = flops / static_cast<double>(Hk) / s * 1e-9;
    std::printf("naive (the pre-issue-14 loop, kv head 0, 1 thread): %.2f GFLOP in %.3f s = %.2f GFLOPS\n",
                flops / static_cast<double>(Hk) * 1e-9, s, gf);
  }

  void* blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!blas) {
    std::printf("dgemm: libopenblas.so.0 not found (%s); install libopenblas0-pthread for the comparison\n",
                dlerror());
    return 0;
  }
  auto dgemm = reinterpret_cast<Dgemm>(dlsym(blas, "cblas_dgemm"));
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(blas, "openblas_set_num_threads"));
  if (!dgemm) {
    std::printf("dgemm: libopenblas.so.0 has no cblas_dgemm\n");
    return 0;
  }
  if (set_threads) set_threads(static_cast<int>(threads));
  std::vector<double> A(static_cast<size_t>(n * n)), B(A.size()), C(A.size(), 0.0);
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = rng.uniform(3 * q.size() + i, -1, 1), B[i] = rng.uniform(4 * q.size() + i, -1, 1);
  const int N = static_cast<int>(n);
  constexpr int kRowMajor = 101, kNoTrans = 111;
  dgemm(kRowMajor, kNoTrans, kNoTrans, N, N, N, 1.0, A.data(), N, B.data(), N, 0.0, C.data(), N);  // warm-up
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    t0 = std::chrono::steady_clock::now();
    dgemm(kRowMajor, kNoTrans, kNoTrans, N, N, N, 1.0, A.data(), N, B.data(), N, 0.0, C.data(), N);
    best = std::min(best, seconds_since(t0));
  }
  const double gemm_gflops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best * 1e-9;
  std::printf("dgemm: OpenBLAS %dx%d, %u threads: best of 3 %.3f s = %.2f GFLOPS\n", N, N, threads, best,
              gemm_gflops);
  std::printf("ratio: reference / dgemm = %.1f%%\n", 100 * ref_gflops / gemm_gflops);
  return 0;
}
