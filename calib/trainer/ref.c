/* CPU reference of the validation trainer's transformer (see ref.h).
 *
 * Per layer, x the residual stream [N = B·T rows, C]:
 *   a = norm1(x);  qkv = a·Wqkv^T + bqkv;  (q, k) ← rope(q, k);  o = causal_attention(q, k, v)
 *   x' = x + o·Wo^T + bo;  m = norm2(x');  f = m·Wfc^T + bfc;  h = act(f);  x'' = x' + h·Wproj^T + bproj
 * norm: LayerNorm (x - mean)·rstd·w + b or RMSNorm x·rstd·w, eps 1e-5.
 * act: GELU, tanh form (GPT-2), or SwiGLU silu(gate)·up with f = [gate | up].
 * rope: interleaved pairs (2i, 2i+1) rotated by t·theta^(-2i/head_dim) (Llama's reference form).
 * attention: softmax(q·k/sqrt(head_dim)) over keys j ≤ t; query head h reads kv head h / (H/KV).
 * loss: mean over positions of logsumexp(logits[:vocab]) − logits[target]; padded vocab columns
 * (vocab … vocab_padded) take no part. Embedding: x0 = wte[token] (+ wpe[t] for learned positions). */
#include "calib/trainer/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-5

typedef struct {
  double *x_in, *a, *a_rstd, *a_mean, *qkv, *att, *p, *x_mid, *m, *m_rstd, *m_mean, *f, *h;
} RefLayer;

struct TrainerRef {
  TrainerShape s;
  TrainerLayout L;
  int B, T, N;
  RefLayer *layer;
  double *x_out, *xf, *xf_rstd, *xf_mean, *logits, *probs;
  int *tokens, *targets;
  double loss;
};

static double *
zalloc (size_t n)
{
  return calloc (n ? n : 1, sizeof (double));
}

TrainerRef *
trainer_ref_new (const TrainerShape *s, int batch)
{
  TrainerRef *r = calloc (1, sizeof *r);
  r->s = *s;
  trainer_layout_init (&r->L, s);
  r->B = batch;
  r->T = s->seq_len;
  r->N = batch * s->seq_len;
  size_t N = (size_t) r->N, C = (size_t) s->hidden;
  size_t qkv = (size_t) s->q_dim + 2 * (size_t) s->kv_dim;
  r->layer = calloc ((size_t) s->layers, sizeof (RefLayer));
  for (int l = 0; l < s->layers; l++)
    {
      RefLayer *y = &r->layer[l];
      y->x_in = zalloc (N * C);
      y->a = zalloc (N * C);
      y->a_rstd = zalloc (N);
      y->a_mean = zalloc (N);
      y->qkv = zalloc (N * qkv);
      y->att = zalloc (N * (size_t) s->q_dim);
      y->p = zalloc ((size_t) batch * s->heads * r->T * r->T);
      y->x_mid = zalloc (N * C);
      y->m = zalloc (N * C);
      y->m_rstd = zalloc (N);
      y->m_mean = zalloc (N);
      y->f = zalloc (N * (size_t) r->L.fc_out);
      y->h = zalloc (N * (size_t) s->ffn_hidden);
    }
  r->x_out = zalloc (N * C);
  r->xf = zalloc (N * C);
  r->xf_rstd = zalloc (N);
  r->xf_mean = zalloc (N);
  r->logits = zalloc (N * (size_t) s->vocab_padded);
  r->probs = zalloc (N * (size_t) s->vocab_padded);
  r->tokens = calloc (N, sizeof (int));
  r->targets = calloc (N, sizeof (int));
  return r;
}

void
trainer_ref_free (TrainerRef *r)
{
  if (!r)
    return;
  for (int l = 0; l < r->s.layers; l++)
    {
      RefLayer *y = &r->layer[l];
      double *all[] = { y->x_in, y->a, y->a_rstd, y->a_mean, y->qkv, y->att, y->p, y->x_mid, y->m,
                        y->m_rstd, y->m_mean, y->f, y->h };
      for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free (all[i]);
    }
  free (r->layer);
  free (r->x_out); free (r->xf); free (r->xf_rstd); free (r->xf_mean);
  free (r->logits); free (r->probs); free (r->tokens); free (r->targets);
  free (r);
}

const TrainerLayout *
trainer_ref_layout (const TrainerRef *r)
{
  return &r->L;
}

const double *
trainer_ref_logits (const TrainerRef *r)
{
  return r->logits;
}

static const double *
P (const TrainerRef *r, const double *params, TrainerTensor t, int l)
{
  return r->L.size[t] || t == TRAINER_HEAD ? params + trainer_layout_offset (&r->L, t, l) : NULL;
}

static double *
G (const TrainerRef *r, double *grads, TrainerTensor t, int l)
{
  return r->L.size[t] || t == TRAINER_HEAD ? grads + trainer_layout_offset (&r->L, t, l) : NULL;
}

static void
norm_forward (const TrainerRef *r, const double *x, const double *w, const double *b, double *y,
              double *mean, double *rstd)
{
  int C = r->s.hidden;
  for (int n = 0; n < r->N; n++)
    {
      const double *xr = x + (size_t) n * C;
      double mu = 0, v = 0;
      if (!r->s.rmsnorm)
        {
          for (int c = 0; c < C; c++)
            mu += xr[c];
          mu /= C;
        }
      for (int c = 0; c < C; c++)
        v += (xr[c] - mu) * (xr[c] - mu);
      double rs = 1.0 / sqrt (v / C + EPS);
      mean[n] = mu;
      rstd[n] = rs;
      for (int c = 0; c < C; c++)
        y[(size_t) n * C + c] = (xr[c] - mu) * rs * w[c] + (b ? b[c] : 0.0);
    }
}

/* dx += norm backward; dw, db accumulate. */
static void
norm_backward (const TrainerRef *r, const double *dy, const double *x, const double *w, const double *mean,
               const double *rstd, double *dx, double *dw, double *db)
{
  int C = r->s.hidden;
  for (int n = 0; n < r->N; n++)
    {
      const double *xr = x + (size_t) n * C, *dyr = dy + (size_t) n * C;
      double mdx = 0, mdxx = 0;
      for (int c = 0; c < C; c++)
        {
          double xhat = (xr[c] - mean[n]) * rstd[n];
          double dxhat = dyr[c] * w[c];
          mdx += dxhat;
          mdxx += dxhat * xhat;
          dw[c] += dyr[c] * xhat;
          if (db)
            db[c] += dyr[c];
        }
      mdx /= C;
      mdxx /= C;
      if (r->s.rmsnorm)
        mdx = 0;
      for (int c = 0; c < C; c++)
        {
          double xhat = (xr[c] - mean[n]) * rstd[n];
          dx[(size_t) n * C + c] += rstd[n] * (dyr[c] * w[c] - mdx - xhat * mdxx);
        }
    }
}

/* y[N, out] (+)= x[N, in] · W[out, in]^T + b */
static void
linear_forward (int N, int in, int out, const double *x, const double *W, const double *b, double *y, int accumulate)
{
  for (int n = 0; n < N; n++)
    for (int o = 0; o < out; o++)
      {
        double acc = b ? b[o] : 0.0;
        for (int i = 0; i < in; i++)
          acc += x[(size_t) n * in + i] * W[(size_t) o * in + i];
        y[(size_t) n * out + o] = (accumulate ? y[(size_t) n * out + o] : 0.0) + acc;
      }
}

/* dx += dy·W; dW += dy^T·x; db += Σ dy */
static void
linear_backward (int N, int in, int out, const double *dy, const double *x, const double *W, double *dx,
                 double *dW, double *db)
{
  for (int n = 0; n < N; n++)
    for (int o = 0; o < out; o++)
      {
        double g = dy[(size_t) n * out + o];
        if (db)
          db[o] += g;
        for (int i = 0; i < in; i++)
          {
            dx[(size_t) n * in + i] += g * W[(size_t) o * in + i];
            dW[(size_t) o * in + i] += g * x[(size_t) n * in + i];
          }
      }
}

/* Rotates q and k of every row in place; SIGN -1 applies the inverse (the backward of a rotation). */
static void
rope (const TrainerRef *r, double *qkv, double sign)
{
  int hd = r->s.head_dim, stride = r->s.q_dim + 2 * r->s.kv_dim;
  int nheads = r->s.heads + r->s.kv_heads;
  for (int n = 0; n < r->N; n++)
    {
      int t = n % r->T;
      for (int h = 0; h < nheads; h++)
        for (int i = 0; i < hd / 2; i++)
          {
            double ang = t * pow (r->s.rope_theta, -2.0 * i / hd);
            double c = cos (ang), s = sign * sin (ang);
            double *v = qkv + (size_t) n * stride + (size_t) h * hd + 2 * i;
            double x0 = v[0], x1 = v[1];
            v[0] = x0 * c - x1 * s;
            v[1] = x0 * s + x1 * c;
          }
    }
}

static void
attention_forward (const TrainerRef *r, const double *qkv, double *att, double *p)
{
  int H = r->s.heads, hd = r->s.head_dim, T = r->T, group = r->s.heads / r->s.kv_heads;
  int stride = r->s.q_dim + 2 * r->s.kv_dim;
  double scale = 1.0 / sqrt (hd);
  for (int b = 0; b < r->B; b++)
    for (int h = 0; h < H; h++)
      {
        int koff = r->s.q_dim + (h / group) * hd, voff = koff + r->s.kv_dim;
        for (int t = 0; t < T; t++)
          {
            const double *q = qkv + (size_t) (b * T + t) * stride + h * hd;
            double *pr = p + (((size_t) b * H + h) * T + t) * T;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j <= t; j++)
              {
                const double *k = qkv + (size_t) (b * T + j) * stride + koff;
                double s = 0;
                for (int d = 0; d < hd; d++)
                  s += q[d] * k[d];
                pr[j] = s * scale;
                if (pr[j] > mx)
                  mx = pr[j];
              }
            for (int j = 0; j <= t; j++)
              sum += (pr[j] = exp (pr[j] - mx));
            for (int j = 0; j < T; j++)
              pr[j] = j <= t ? pr[j] / sum : 0.0;
            double *o = att + (size_t) (b * T + t) * r->s.q_dim + h * hd;
            for (int d = 0; d < hd; d++)
              {
                double acc = 0;
                for (int j = 0; j <= t; j++)
                  acc += pr[j] * qkv[(size_t) (b * T + j) * stride + voff + d];
                o[d] = acc;
              }
          }
      }
}

static void
attention_backward (const TrainerRef *r, const double *datt, const double *qkv, const double *p, double *dqkv)
{
  int H = r->s.heads, hd = r->s.head_dim, T = r->T, group = r->s.heads / r->s.kv_heads;
  int stride = r->s.q_dim + 2 * r->s.kv_dim;
  double scale = 1.0 / sqrt (hd);
  double *dp = malloc ((size_t) T * sizeof (double));
  for (int b = 0; b < r->B; b++)
    for (int h = 0; h < H; h++)
      {
        int koff = r->s.q_dim + (h / group) * hd, voff = koff + r->s.kv_dim;
        for (int t = 0; t < T; t++)
          {
            const double *pr = p + (((size_t) b * H + h) * T + t) * T;
            const double *dout = datt + (size_t) (b * T + t) * r->s.q_dim + h * hd;
            const double *q = qkv + (size_t) (b * T + t) * stride + h * hd;
            double *dq = dqkv + (size_t) (b * T + t) * stride + h * hd;
            double dot = 0;
            for (int j = 0; j <= t; j++)
              {
                const double *v = qkv + (size_t) (b * T + j) * stride + voff;
                double *dv = dqkv + (size_t) (b * T + j) * stride + voff;
                double s = 0;
                for (int d = 0; d < hd; d++)
                  {
                    s += dout[d] * v[d];
                    dv[d] += pr[j] * dout[d];
                  }
                dp[j] = s;
                dot += pr[j] * s;
              }
            for (int j = 0; j <= t; j++)
              {
                double ds = pr[j] * (dp[j] - dot) * scale;
                const double *k = qkv + (size_t) (b * T + j) * stride + koff;
                double *dk = dqkv + (size_t) (b * T + j) * stride + koff;
                for (int d = 0; d < hd; d++)
                  {
                    dq[d] += ds * k[d];
                    dk[d] += ds * q[d];
                  }
              }
          }
      }
  free (dp);
}

#define GELU_K 0.7978845608028654 /* sqrt(2/pi) */

static void
act_forward (const TrainerRef *r, const double *f, double *h)
{
  int F = r->s.ffn_hidden, W = r->L.fc_out;
  for (int n = 0; n < r->N; n++)
    for (int i = 0; i < F; i++)
      {
        double x = f[(size_t) n * W + i];
        if (r->s.swiglu)
          h[(size_t) n * F + i] = x / (1.0 + exp (-x)) * f[(size_t) n * W + F + i];
        else
          h[(size_t) n * F + i] = 0.5 * x * (1.0 + tanh (GELU_K * (x + 0.044715 * x * x * x)));
      }
}

static void
act_backward (const TrainerRef *r, const double *dh, const double *f, double *df)
{
  int F = r->s.ffn_hidden, W = r->L.fc_out;
  for (int n = 0; n < r->N; n++)
    for (int i = 0; i < F; i++)
      {
        double x = f[(size_t) n * W + i], g = dh[(size_t) n * F + i];
        if (r->s.swiglu)
          {
            double sg = 1.0 / (1.0 + exp (-x)), up = f[(size_t) n * W + F + i];
            df[(size_t) n * W + i] = g * up * sg * (1.0 + x * (1.0 - sg));
            df[(size_t) n * W + F + i] = g * x * sg;
          }
        else
          {
            double u = GELU_K * (x + 0.044715 * x * x * x), th = tanh (u);
            double du = GELU_K * (1.0 + 3.0 * 0.044715 * x * x);
            df[(size_t) n * W + i] = g * (0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du);
          }
      }
}

double
trainer_ref_forward (TrainerRef *r, const double *params, const int *tokens, const int *targets)
{
  const TrainerShape *s = &r->s;
  int N = r->N, C = s->hidden, Vp = s->vocab_padded;
  int qkvw = s->q_dim + 2 * s->kv_dim;
  memcpy (r->tokens, tokens, (size_t) N * sizeof (int));
  memcpy (r->targets, targets, (size_t) N * sizeof (int));
  double *x = s->layers ? r->layer[0].x_in : r->x_out;
  const double *wte = P (r, params, TRAINER_WTE, 0), *wpe = P (r, params, TRAINER_WPE, 0);
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      x[(size_t) n * C + c] = wte[(size_t) tokens[n] * C + c] + (wpe ? wpe[(size_t) (n % r->T) * C + c] : 0.0);
  for (int l = 0; l < s->layers; l++)
    {
      RefLayer *y = &r->layer[l];
      double *next = l + 1 < s->layers ? r->layer[l + 1].x_in : r->x_out;
      norm_forward (r, y->x_in, P (r, params, TRAINER_LN1_W, l), P (r, params, TRAINER_LN1_B, l), y->a,
                    y->a_mean, y->a_rstd);
      linear_forward (N, C, qkvw, y->a, P (r, params, TRAINER_QKV_W, l), P (r, params, TRAINER_QKV_B, l), y->qkv, 0);
      if (s->rope)
        rope (r, y->qkv, 1.0);
      attention_forward (r, y->qkv, y->att, y->p);
      memcpy (y->x_mid, y->x_in, (size_t) N * C * sizeof (double));
      linear_forward (N, s->q_dim, C, y->att, P (r, params, TRAINER_O_W, l), P (r, params, TRAINER_O_B, l), y->x_mid, 1);
      norm_forward (r, y->x_mid, P (r, params, TRAINER_LN2_W, l), P (r, params, TRAINER_LN2_B, l), y->m,
                    y->m_mean, y->m_rstd);
      linear_forward (N, C, r->L.fc_out, y->m, P (r, params, TRAINER_FC_W, l), P (r, params, TRAINER_FC_B, l), y->f, 0);
      act_forward (r, y->f, y->h);
      memcpy (next, y->x_mid, (size_t) N * C * sizeof (double));
      linear_forward (N, s->ffn_hidden, C, y->h, P (r, params, TRAINER_PROJ_W, l), P (r, params, TRAINER_PROJ_B, l),
                      next, 1);
    }
  norm_forward (r, r->x_out, P (r, params, TRAINER_LNF_W, 0), P (r, params, TRAINER_LNF_B, 0), r->xf, r->xf_mean,
                r->xf_rstd);
  linear_forward (N, C, Vp, r->xf, P (r, params, TRAINER_HEAD, 0), NULL, r->logits, 0);
  double loss = 0;
  for (int n = 0; n < N; n++)
    {
      const double *lg = r->logits + (size_t) n * Vp;
      double *pr = r->probs + (size_t) n * Vp;
      double mx = -INFINITY, sum = 0;
      for (int v = 0; v < s->vocab; v++)
        if (lg[v] > mx)
          mx = lg[v];
      for (int v = 0; v < s->vocab; v++)
        sum += exp (lg[v] - mx);
      for (int v = 0; v < Vp; v++)
        pr[v] = v < s->vocab ? exp (lg[v] - mx) / sum : 0.0;
      loss += mx + log (sum) - lg[targets[n]];
    }
  r->loss = loss / N;
  return r->loss;
}

void
trainer_ref_backward (TrainerRef *r, const double *params, double *grads)
{
  const TrainerShape *s = &r->s;
  int N = r->N, C = s->hidden, Vp = s->vocab_padded;
  int qkvw = s->q_dim + 2 * s->kv_dim;
  size_t NC = (size_t) N * C;
  memset (grads, 0, r->L.total * sizeof (double));
  double *dlogits = zalloc ((size_t) N * Vp);
  double *dxf = zalloc (NC), *dx = zalloc (NC), *dxm = zalloc (NC), *da = zalloc (NC);
  double *dqkv = zalloc ((size_t) N * qkvw), *datt = zalloc ((size_t) N * s->q_dim);
  double *df = zalloc ((size_t) N * r->L.fc_out), *dh = zalloc ((size_t) N * s->ffn_hidden);
  for (int n = 0; n < N; n++)
    for (int v = 0; v < Vp; v++)
      dlogits[(size_t) n * Vp + v] = (r->probs[(size_t) n * Vp + v] - (v == r->targets[n] ? 1.0 : 0.0)) / N;
  linear_backward (N, C, Vp, dlogits, r->xf, P (r, params, TRAINER_HEAD, 0), dxf, G (r, grads, TRAINER_HEAD, 0), NULL);
  norm_backward (r, dxf, r->x_out, P (r, params, TRAINER_LNF_W, 0), r->xf_mean, r->xf_rstd, dx,
                 G (r, grads, TRAINER_LNF_W, 0), G (r, grads, TRAINER_LNF_B, 0));
  for (int l = s->layers - 1; l >= 0; l--)
    {
      RefLayer *y = &r->layer[l];
      /* dx holds d/d(x''); MLP branch */
      memset (dh, 0, (size_t) N * s->ffn_hidden * sizeof (double));
      linear_backward (N, s->ffn_hidden, C, dx, y->h, P (r, params, TRAINER_PROJ_W, l), dh,
                       G (r, grads, TRAINER_PROJ_W, l), G (r, grads, TRAINER_PROJ_B, l));
      act_backward (r, dh, y->f, df);
      memset (da, 0, NC * sizeof (double));
      linear_backward (N, C, r->L.fc_out, df, y->m, P (r, params, TRAINER_FC_W, l), da, G (r, grads, TRAINER_FC_W, l),
                       G (r, grads, TRAINER_FC_B, l));
      memcpy (dxm, dx, NC * sizeof (double));
      norm_backward (r, da, y->x_mid, P (r, params, TRAINER_LN2_W, l), y->m_mean, y->m_rstd, dxm,
                     G (r, grads, TRAINER_LN2_W, l), G (r, grads, TRAINER_LN2_B, l));
      /* attention branch */
      memset (datt, 0, (size_t) N * s->q_dim * sizeof (double));
      linear_backward (N, s->q_dim, C, dxm, y->att, P (r, params, TRAINER_O_W, l), datt, G (r, grads, TRAINER_O_W, l),
                       G (r, grads, TRAINER_O_B, l));
      memset (dqkv, 0, (size_t) N * qkvw * sizeof (double));
      attention_backward (r, datt, y->qkv, y->p, dqkv);
      if (s->rope)
        rope (r, dqkv, -1.0);
      memset (da, 0, NC * sizeof (double));
      linear_backward (N, C, qkvw, dqkv, y->a, P (r, params, TRAINER_QKV_W, l), da, G (r, grads, TRAINER_QKV_W, l),
                       G (r, grads, TRAINER_QKV_B, l));
      memcpy (dx, dxm, NC * sizeof (double));
      norm_backward (r, da, y->x_in, P (r, params, TRAINER_LN1_W, l), y->a_mean, y->a_rstd, dx,
                     G (r, grads, TRAINER_LN1_W, l), G (r, grads, TRAINER_LN1_B, l));
    }
  double *gwte = G (r, grads, TRAINER_WTE, 0), *gwpe = G (r, grads, TRAINER_WPE, 0);
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      {
        gwte[(size_t) r->tokens[n] * C + c] += dx[(size_t) n * C + c];
        if (gwpe)
          gwpe[(size_t) (n % r->T) * C + c] += dx[(size_t) n * C + c];
      }
  free (dlogits); free (dxf); free (dx); free (dxm); free (da); free (dqkv); free (datt); free (df); free (dh);
}
