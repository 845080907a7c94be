// oneDNN 2.x convolution primitives (the op-descriptor API of Debian 12's
// libdnnl 2.6).
#include "onednn_conv.h"

#include <dnnl.hpp>

namespace bench {

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

struct OnednnConv::State {
  engine eng{engine::kind::cpu, 0};
  stream strm{eng};
  convolution_forward::primitive_desc fwd_pd;
  convolution_backward_data::primitive_desc bwd_data_pd;
  convolution_backward_weights::primitive_desc bwd_wt_pd;
  convolution_forward fwd;
  convolution_backward_data bwd_data;
  convolution_backward_weights bwd_wt;
  // Forward memories.
  memory src, wei, bias, dst;
  // Backward-data memories (weights may want another layout than forward).
  memory bd_wei, bd_diff_dst, bd_diff_src;
  // Backward-weights memories.
  memory bw_src, bw_diff_dst, bw_diff_wei, bw_diff_bias;
};

// A memory for desc md, filled with a small constant (values do not change
// the timing; NaN or denormal garbage could).
static memory filled(const memory::desc &md, const engine &eng) {
  memory m(md, eng);
  float *p = static_cast<float *>(m.get_data_handle());
  size_t n = md.get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i)
    p[i] = 0.01f * (float)(i % 97);
  return m;
}

OnednnConv::OnednnConv(const dnnk_conv_desc &d, bool blocked) : s_(new State) {
  State &s = *s_;
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  memory::dims src_dims = {d.n, d.c, d.h, d.w};
  memory::dims wei_dims = {d.k, d.c, d.kh, d.kw};
  memory::dims dst_dims = {d.n, d.k, oh, ow};
  memory::dims bias_dims = {d.k};
  memory::dims strides = {d.stride_h, d.stride_w};
  memory::dims pad = {d.pad_h, d.pad_w};
  memory::desc src_md(src_dims, dt::f32, blocked ? tag::any : tag::nchw);
  memory::desc wei_md(wei_dims, dt::f32, blocked ? tag::any : tag::oihw);
  memory::desc dst_md(dst_dims, dt::f32, blocked ? tag::any : tag::nchw);
  memory::desc bias_md(bias_dims, dt::f32, tag::x);

  convolution_forward::desc fd(prop_kind::forward_training,
                               algorithm::convolution_direct, src_md, wei_md,
                               bias_md, dst_md, strides, pad, pad);
  s.fwd_pd = convolution_forward::primitive_desc(fd, s.eng);
  convolution_backward_data::desc bdd(algorithm::convolution_direct, src_md,
                                      wei_md, dst_md, strides, pad, pad);
  s.bwd_data_pd =
      convolution_backward_data::primitive_desc(bdd, s.eng, s.fwd_pd);
  convolution_backward_weights::desc bwd(algorithm::convolution_direct, src_md,
                                         wei_md, bias_md, dst_md, strides, pad,
                                         pad);
  s.bwd_wt_pd =
      convolution_backward_weights::primitive_desc(bwd, s.eng, s.fwd_pd);
  s.fwd = convolution_forward(s.fwd_pd);
  s.bwd_data = convolution_backward_data(s.bwd_data_pd);
  s.bwd_wt = convolution_backward_weights(s.bwd_wt_pd);

  s.src = filled(s.fwd_pd.src_desc(), s.eng);
  s.wei = filled(s.fwd_pd.weights_desc(), s.eng);
  s.bias = filled(s.fwd_pd.bias_desc(), s.eng);
  s.dst = filled(s.fwd_pd.dst_desc(), s.eng);
  s.bd_wei = filled(s.bwd_data_pd.weights_desc(), s.eng);
  s.bd_diff_dst = filled(s.bwd_data_pd.diff_dst_desc(), s.eng);
  s.bd_diff_src = filled(s.bwd_data_pd.diff_src_desc(), s.eng);
  s.bw_src = filled(s.bwd_wt_pd.src_desc(), s.eng);
  s.bw_diff_dst = filled(s.bwd_wt_pd.diff_dst_desc(), s.eng);
  s.bw_diff_wei = filled(s.bwd_wt_pd.diff_weights_desc(), s.eng);
  s.bw_diff_bias = filled(s.bwd_wt_pd.diff_bias_desc(), s.eng);
}

OnednnConv::~OnednnConv() = default;

void OnednnConv::forward() {
  State &s = *s_;
  s.fwd.execute(s.strm, {{DNNL_ARG_SRC, s.src},
                         {DNNL_ARG_WEIGHTS, s.wei},
                         {DNNL_ARG_BIAS, s.bias},
                         {DNNL_ARG_DST, s.dst}});
  s.strm.wait();
}

void OnednnConv::backward_data() {
  State &s = *s_;
  s.bwd_data.execute(s.strm, {{DNNL_ARG_DIFF_DST, s.bd_diff_dst},
                              {DNNL_ARG_WEIGHTS, s.bd_wei},
                              {DNNL_ARG_DIFF_SRC, s.bd_diff_src}});
  s.strm.wait();
}

void OnednnConv::backward_weights() {
  State &s = *s_;
  s.bwd_wt.execute(s.strm, {{DNNL_ARG_SRC, s.bw_src},
                            {DNNL_ARG_DIFF_DST, s.bw_diff_dst},
                            {DNNL_ARG_DIFF_WEIGHTS, s.bw_diff_wei},
                            {DNNL_ARG_DIFF_BIAS, s.bw_diff_bias}});
  s.strm.wait();
}

std::string OnednnConv::impl() const {
  return std::string(s_->fwd_pd.impl_info_str()) + " / " +
         s_->bwd_data_pd.impl_info_str() + " / " +
         s_->bwd_wt_pd.impl_info_str();
}

} // namespace bench
