// cxxshapes.cc — a small C++ program whose time is spent in named namespaces and classes, for labels and
// `hot --group-by module` (docs/design.md §4.1): geometry::Polygon::area (a member function returning a double),
// store::Table<int>::lookup (a class template over std::map), and std::sort on a vector (std's own templates,
// whose demangled names start with a return type: "void std::__introsort_loop<...>(...)"). The three run in
// turn, each for about a third of the CPU time, until SECONDS of CPU time (default 1) have passed.
// Usage: cxxshapes [SECONDS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <vector>

#define NOINLINE __attribute__((noinline, noipa))

namespace geometry {
class Polygon {
public:
	explicit Polygon(int n) : xs_(n), ys_(n)
	{
		for (int i = 0; i < n; i++) {
			xs_[i] = (i * 37) % 101;
			ys_[i] = (i * 53) % 97;
		}
	}
	NOINLINE double area(int rounds) const
	{
		double a = 0;
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i + 1 < xs_.size(); i++)
				a += xs_[i] * ys_[i + 1] - xs_[i + 1] * ys_[i] + r * 1e-9;
		return a;
	}

private:
	std::vector<double> xs_, ys_;
};
} // namespace geometry

namespace store {
template <typename T> class Table {
public:
	explicit Table(int n)
	{
		for (int i = 0; i < n; i++)
			rows_[i * 7] = T(i);
	}
	NOINLINE long lookup(int rounds) const
	{
		long s = 0;
		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < 1000; k++) {
				auto it = rows_.find((k * 13 + r) % 7000);
				s += it == rows_.end() ? 1 : (long)it->second;
			}
		return s;
	}

private:
	std::map<int, T> rows_;
};
} // namespace store

static NOINLINE long sort_round(int n, unsigned seed)
{
	std::vector<int> v(n);
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 8);
	}
	std::sort(v.begin(), v.end());
	return v[n / 2];
}

static double cpu_seconds()
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	geometry::Polygon poly(4000);
	store::Table<int> table(1000);
	double sum = 0;
	unsigned seed = 1;
	double start = cpu_seconds();
	while (cpu_seconds() - start < seconds) {
		sum += poly.area(400);
		sum += (double)table.lookup(40);
		sum += (double)sort_round(40000, seed++);
	}
	std::printf("%g\n", sum);
	return 0;
}
