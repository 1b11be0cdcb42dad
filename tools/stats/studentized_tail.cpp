// How often a correct implementation falls outside properties::measure's interval r +- z*se
// (the availability properties in scenarios/chaos_properties_test.cpp): up times exponential
// with mean m, repairs exactly R, n cycles. The estimator is studentized and the up times are
// skewed, so the tail is heavier than the normal's (6e-7 at z = 5). Not built by CMake (it uses
// the standard library's distributions, kept out of the product); run it by hand:
//   g++ -O2 -std=c++20 tools/stats/studentized_tail.cpp -o /tmp/tail && /tmp/tail   # ~2 minutes
// Its output on 2026-11-22 (2,000,000 trials per line), the figures quoted in the test:
//   R/m 0.010 n 100: P(|t|>5) = 2.00e-05  P(|t|>6) = 2.50e-06
//   R/m 0.100 n 200: P(|t|>5) = 3.00e-06  P(|t|>6) = 0
//   R/m 1.000 n 100: P(|t|>5) = 1.95e-05  P(|t|>6) = 5.00e-07
//   R/m 2.000 n 100: P(|t|>5) = 4.10e-05  P(|t|>6) = 2.50e-06
//   R/m 2.000 n 200: P(|t|>5) = 1.20e-05  P(|t|>6) = 5.00e-07
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
// Studentized ratio estimator for U~Exp(m), C = U + R; how often is the true A outside r +- z se?
int main() {
  std::mt19937_64 g(42);
  for (double rho : {0.01, 0.1, 0.5, 0.856, 1.0, 2.0}) {  // R / m
    for (int n : {100, 200, 237}) {
      const double m = 1.0, R = rho * m, A = m / (m + R);
      std::exponential_distribution<double> ex(1.0 / m);
      long trials = 2000000, out5 = 0, out6 = 0, lo5 = 0;
      std::vector<double> u(n);
      for (long t = 0; t < trials; ++t) {
        double su = 0, sc = 0;
        for (int i = 0; i < n; ++i) { u[i] = ex(g); su += u[i]; sc += u[i] + R; }
        const double r = su / sc, mc = sc / n;
        double ss = 0;
        for (int i = 0; i < n; ++i) { const double d = u[i] - r * (u[i] + R); ss += d * d; }
        const double se = std::sqrt(ss / (n - 1) / n) / mc;
        const double z = (A - r) / se;
        if (std::abs(z) > 5) ++out5;
        if (std::abs(z) > 6) ++out6;
        if (z > 5) ++lo5;
      }
      std::printf("R/m %.3f n %d: P(|t|>5) = %.2e (true above: %.2e)  P(|t|>6) = %.2e\n", rho, n, double(out5) / trials, double(lo5) / trials, double(out6) / trials);
    }
  }
}
