// C++ in target regions: templates, classes with member functions, virtual
// dispatch on objects built on the device, lambdas, operator overloading,
// references, and mapping arrays of class objects.
// RUN: %clangxx-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <cstdio>
#include <unistd.h>

#pragma omp declare target
template <typename T, int K> struct Vec {
  T v[K];
  Vec operator+(const Vec &o) const {
    Vec r;
    for (int i = 0; i < K; ++i)
      r.v[i] = v[i] + o.v[i];
    return r;
  }
  T dot(const Vec &o) const {
    T s = 0;
    for (int i = 0; i < K; ++i)
      s += v[i] * o.v[i];
    return s;
  }
};

template <typename T> T accumulate(const T *p, int n, T init) {
  for (int i = 0; i < n; ++i)
    init += p[i];
  return init;
}

struct Shape {
  virtual ~Shape() {}
  virtual double area() const = 0;
};
struct Rect : Shape {
  double w, h;
  Rect(double w, double h) : w(w), h(h) {}
  double area() const override { return w * h; }
};
struct Tri : Shape {
  double b, h;
  Tri(double b, double h) : b(b), h(h) {}
  double area() const override { return 0.5 * b * h; }
};
double total_area(const Shape *const *s, int n) {
  double a = 0;
  for (int i = 0; i < n; ++i)
    a += s[i]->area();
  return a;
}
#pragma omp end declare target

struct Particle {
  float x, y;
  int id;
};

int main() {
  int host_pid = getpid(), dev_pid = -1;
  Vec<int, 4> a = {{1, 2, 3, 4}}, b = {{10, 20, 30, 40}};
  int dot = 0, first = 0;
  double area = 0, acc = 0;
  long lam = 0;
  double arr[5] = {0.5, 1.5, 2.5, 3.5, 4.5};

#pragma omp target map(to : a, b, arr) map(from : dot, first, area, acc, lam, dev_pid)
  {
    dev_pid = getpid();
    Vec<int, 4> c = a + b;
    first = c.v[0];
    dot = c.dot(a);
    Rect r(3.0, 4.0);
    Tri t(6.0, 5.0);
    const Shape *shapes[2] = {&r, &t};
    area = total_area(shapes, 2);
    acc = accumulate(arr, 5, 100.0);
    int base = 3;
    auto f = [base](int x) { return (long)x * x + base; };
    long s = 0;
    for (int i = 0; i < 10; ++i)
      s += f(i);
    lam = s;
  }
  std::printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  std::printf("first: %d dot: %d\n", first, dot);
  // CHECK-NEXT: first: 11 dot: 330
  std::printf("area: %.1f acc: %.1f lambda: %ld\n", area, acc, lam);
  // CHECK-NEXT: area: 27.0 acc: 112.5 lambda: 315

  Particle ps[100];
  for (int i = 0; i < 100; ++i)
    ps[i] = {float(i), float(2 * i), i};
#pragma omp target map(tofrom : ps) map(from : dev_pid)
  {
    dev_pid = getpid();
    for (auto &p : ps) {
      p.x += 0.5f;
      p.y *= 2.0f;
      p.id = -p.id;
    }
  }
  double sx = 0, sy = 0;
  long sid = 0;
  for (auto &p : ps) {
    sx += p.x;
    sy += p.y;
    sid += p.id;
  }
  std::printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  std::printf("particles: %.1f %.1f %ld\n", sx, sy, sid);
  // CHECK-NEXT: particles: 5000.0 19800.0 -4950
  return 0;
}
