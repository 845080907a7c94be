// Halo exchange: pack/unpack round trips on uneven tiles, and a Jacobi
// iteration on a grid split into tiles (overlapping the inner sweep with the
// exchange) that must equal the undivided grid bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "dnnk.h"
#include "reference.h"

namespace {

TEST(Halo, SizesAndCounts) {
  dnnk_tile t = {5, 7, 2};
  EXPECT_EQ(dnnk_tile_ld(&t), 11);
  EXPECT_EQ(dnnk_tile_size(&t), 9L * 11);
  EXPECT_EQ(dnnk_halo_count(&t, DNNK_NORTH, 0), 14);
  EXPECT_EQ(dnnk_halo_count(&t, DNNK_SOUTH, 1), 22);
  EXPECT_EQ(dnnk_halo_count(&t, DNNK_WEST, 0), 10);
  EXPECT_EQ(dnnk_halo_count(&t, DNNK_EAST, 1), 10);
}

TEST(Halo, PackThenUnpackCopiesBordersToGhosts) {
  // Two horizontally and two vertically adjacent tiles of uneven sizes: the
  // ghosts of one must equal the border points of the other.
  for (int w : {1, 2, 3}) {
    dnnk_tile a = {7, 5, w}, b = {7, 9, w}; // west / east neighbours
    auto ga = random_floats(dnnk_tile_size(&a), 1);
    auto gb = random_floats(dnnk_tile_size(&b), 2);
    std::vector<float> buf(dnnk_halo_count(&a, DNNK_EAST, 0));
    dnnk_halo_pack(&a, ga.data(), DNNK_EAST, 0, buf.data());
    dnnk_halo_unpack(&b, gb.data(), DNNK_WEST, 0, buf.data());
    dnnk_halo_pack(&b, gb.data(), DNNK_WEST, 0, buf.data());
    dnnk_halo_unpack(&a, ga.data(), DNNK_EAST, 0, buf.data());
    int la = dnnk_tile_ld(&a), lb = dnnk_tile_ld(&b);
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < w; ++x) {
        // b's west ghost column x == a's interior column nx - w + x.
        ASSERT_EQ(gb[(y + w) * lb + x], ga[(y + w) * la + w + 5 - w + x]);
        // a's east ghost column == b's first interior columns.
        ASSERT_EQ(ga[(y + w) * la + w + 5 + x], gb[(y + w) * lb + w + x]);
      }

    dnnk_tile n = {4, 6, w}, s = {11, 6, w}; // north / south neighbours
    auto gn = random_floats(dnnk_tile_size(&n), 3);
    auto gs = random_floats(dnnk_tile_size(&s), 4);
    std::vector<float> nb(dnnk_halo_count(&n, DNNK_SOUTH, 1));
    dnnk_halo_pack(&n, gn.data(), DNNK_SOUTH, 1, nb.data());
    dnnk_halo_unpack(&s, gs.data(), DNNK_NORTH, 1, nb.data());
    int ld = dnnk_tile_ld(&n);
    for (int r = 0; r < w; ++r)
      for (int x = 0; x < ld; ++x) // corners included
        ASSERT_EQ(gs[r * ld + x], gn[(4 + r) * ld + x]);
  }
}

TEST(Halo, UnpackTouchesOnlyItsGhostStrip) {
  dnnk_tile t = {6, 5, 2};
  std::vector<float> g(dnnk_tile_size(&t), 0.0f);
  std::vector<float> buf(dnnk_halo_count(&t, DNNK_NORTH, 1), 1.0f);
  for (int side = 0; side < 4; ++side) {
    std::fill(g.begin(), g.end(), 0.0f);
    dnnk_halo_unpack(&t, g.data(), side, 1, buf.data());
    long ones = 0;
    for (float v : g)
      ones += v == 1.0f;
    EXPECT_EQ(ones, dnnk_halo_count(&t, side, 1)) << side;
  }
}

// One tile of a 2D decomposition: its origin in the global interior, its
// tile descriptor and two storage buffers.
struct Part {
  int y0, x0;
  dnnk_tile t;
  std::vector<float> cur, next;
};

// Exchanges all borders among the tiles of a py x px decomposition, west/east
// first and then north/south with corners, from buffers packed by the
// neighbours. Boundary tiles keep their fixed ghost values.
void exchange(std::vector<Part> &parts, int py, int px) {
  for (int i = 0; i < py; ++i)
    for (int j = 0; j + 1 < px; ++j) {
      Part &w = parts[i * px + j], &e = parts[i * px + j + 1];
      std::vector<float> b(dnnk_halo_count(&w.t, DNNK_EAST, 0));
      dnnk_halo_pack(&w.t, w.cur.data(), DNNK_EAST, 0, b.data());
      dnnk_halo_unpack(&e.t, e.cur.data(), DNNK_WEST, 0, b.data());
      dnnk_halo_pack(&e.t, e.cur.data(), DNNK_WEST, 0, b.data());
      dnnk_halo_unpack(&w.t, w.cur.data(), DNNK_EAST, 0, b.data());
    }
  for (int i = 0; i + 1 < py; ++i)
    for (int j = 0; j < px; ++j) {
      Part &n = parts[i * px + j], &s = parts[(i + 1) * px + j];
      std::vector<float> b(dnnk_halo_count(&n.t, DNNK_SOUTH, 1));
      dnnk_halo_pack(&n.t, n.cur.data(), DNNK_SOUTH, 1, b.data());
      dnnk_halo_unpack(&s.t, s.cur.data(), DNNK_NORTH, 1, b.data());
      dnnk_halo_pack(&s.t, s.cur.data(), DNNK_NORTH, 1, b.data());
      dnnk_halo_unpack(&n.t, n.cur.data(), DNNK_SOUTH, 1, b.data());
    }
}

TEST(Halo, DecomposedJacobiEqualsGlobalJacobi) {
  const int ny = 23, nx = 31, iters = 6;
  const int rows[] = {0, 7, 16, 23}, cols[] = {0, 10, 11, 31}; // uneven
  const int py = 3, px = 3;
  auto g = random_floats((size_t)(ny + 2) * (nx + 2), 5);
  for (int halo : {1, 2}) {
    std::vector<Part> parts;
    for (int i = 0; i < py; ++i)
      for (int j = 0; j < px; ++j) {
        Part p;
        p.y0 = rows[i];
        p.x0 = cols[j];
        p.t = {rows[i + 1] - rows[i], cols[j + 1] - cols[j], halo};
        p.cur.assign(dnnk_tile_size(&p.t), NAN);
        int ld = dnnk_tile_ld(&p.t);
        // Interior plus, where the tile touches the global boundary, the
        // fixed boundary values (the one-point global frame).
        for (int y = -1; y <= p.t.ny; ++y)
          for (int x = -1; x <= p.t.nx; ++x) {
            int gy = p.y0 + y + 1, gx = p.x0 + x + 1;
            bool inside = y >= 0 && y < p.t.ny && x >= 0 && x < p.t.nx;
            bool frame = gy == 0 || gy == ny + 1 || gx == 0 || gx == nx + 1;
            if (inside || frame)
              p.cur[(y + halo) * ld + x + halo] = g[gy * (nx + 2) + gx];
          }
        p.next = p.cur;
        parts.push_back(p);
      }
    std::vector<float> want = g, tmp;
    for (int it = 0; it < iters; ++it) {
      ref::jacobi_global(ny, nx, want, tmp);
      want.swap(tmp);
      // Overlap: inner points first (need no ghosts), then exchange, then
      // the frame of each tile.
      for (auto &p : parts)
        dnnk_jacobi_inner(&p.t, p.cur.data(), p.next.data());
      exchange(parts, py, px);
      for (auto &p : parts) {
        dnnk_jacobi_frame(&p.t, p.cur.data(), p.next.data());
        p.cur.swap(p.next);
      }
    }
    for (auto &p : parts) {
      int ld = dnnk_tile_ld(&p.t);
      for (int y = 0; y < p.t.ny; ++y)
        for (int x = 0; x < p.t.nx; ++x)
          ASSERT_EQ(p.cur[(y + halo) * ld + x + halo],
                    want[(p.y0 + y + 1) * (nx + 2) + p.x0 + x + 1])
              << "halo " << halo << " tile " << p.y0 << "," << p.x0 << " point "
              << y << "," << x;
    }
  }
}

TEST(Halo, RegionSweepOnDegenerateTiles) {
  // 1-wide and 1-tall tiles: the frame sweep alone must cover every point.
  for (auto dims : {std::pair<int, int>{1, 5}, {5, 1}, {1, 1}, {2, 2}}) {
    dnnk_tile t = {dims.first, dims.second, 1};
    auto in = random_floats(dnnk_tile_size(&t), 6);
    std::vector<float> out(in.size(), NAN);
    dnnk_jacobi_inner(&t, in.data(), out.data());
    dnnk_jacobi_frame(&t, in.data(), out.data());
    int ld = dnnk_tile_ld(&t);
    for (int y = 0; y < t.ny; ++y)
      for (int x = 0; x < t.nx; ++x) {
        const float *c = &in[(y + 1) * ld + x + 1];
        float want = 0.25f * ((c[-ld] + c[ld]) + (c[-1] + c[1]));
        ASSERT_EQ(out[(y + 1) * ld + x + 1], want) << y << "," << x;
      }
  }
}

} // namespace
