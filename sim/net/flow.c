/* Stays ~2100 lines: the incremental max-min solver (link classes, transition cache, components,
 * seeded re-solves), bundles, batched starts and the engine-driven completions all work on
 * SimFlowNet's private state. */
/* SimFlowNet: flows sharing links max-min fairly, with completions driven by the engine.
 * See flow.h for the contract.
 *
 * State is lazy: a flow stores (remaining bytes, rate, time of that snapshot), brought up to date
 * only when its rate changes, as remaining -= rate × elapsed. A flow whose rate does not change in
 * a recompute keeps its snapshot and its completion event untouched. A link stores the sizes of
 * the flows it carried to the end; the bytes of its live flows are read from their snapshots
 * when asked (sim_flow_net_link_bytes), so rates are never summed per link.
 *
 * Link classes (why recomputes are cheap when paths are long). Links with the same capacity and
 * the same flows (as a multiset: a flow crossing a link twice counts twice) get the same frozen
 * rates subtracted in the same order during a solve, so their fair shares are bit-identical at
 * every step: the solver needs one link per class, and a flow needs only the list of its classes.
 * Classes are kept up to date as flows start and end: an atom of links (below) moves from its class
 * to the class of its new member multiset (the old one plus or minus the flow), found by an
 * order-free 128-bit signature of the members; consecutive atoms of a path usually make the same
 * move, which a small cache remembers. A recompute
 * walks classes and flows, never whole paths: a representative's PP flow over the routes of a
 * thousand sibling pairs, or a ring over hundreds of edges, is a handful of classes. A class whose
 * only member is one flow stands for that flow's private links: the solver gives the flow that
 * share unless a shared class holds it lower, exactly as with every private link listed.
 *
 * Completion time: the first nanosecond T with rate × (T - t0) >= remaining, i.e.
 * t0 + ceil(remaining / rate · 1e9), where "remaining" is allowed a rounding slack of FINISH_REL
 * of the flow's size. When its event runs, the remaining bytes are re-evaluated; if rounding left
 * more than that slack, the flow is re-planned instead of finished, so it never finishes early.
 * On finishing, each link it crossed counts its whole size, so each link's byte count is exactly
 * the sum of the sizes of the flows it carried.
 *
 * Atoms (why a start costs what its path meets, not its links). Links that every path started so
 * far crossed alike (the same number of times, or not at all) and that have one capacity always
 * carry the same flows, so they are always in one class: the net keeps them as one atom, and flows
 * move atoms, not links. Atoms are refined by each path as it is derived (partition refinement:
 * the links of an atom the path crosses unevenly or partly are split off, and every live flow
 * crossing the old atom is told it crosses the new one too), so they stay exact whatever paths
 * come. A path registered once (sim_flow_net_path: a collective's ring over hundreds of edges, a
 * representative's PP send over every sibling pair) keeps its derived atoms, valid while none of
 * them has lost links (a generation per atom), so after the first step of a run its starts cost
 * one move per atom: a ring over 4,096 NICs whose sibling rings and PP sends cross them alike is
 * a couple of atoms. Classes count atoms, not links; a link's bytes are its atom's.
 *
 * Batched starts (why --full costs a stage's lockstep ranks one flow). Flows started with
 * sim_flow_net_start_batched wait, with their callbacks and their starter's derivatives, until the
 * recompute of their nanosecond; there those of one size, weight and derivatives become one bundle
 * whose members keep their callbacks (Flow.cbs, carried through splits by member index). Max-min
 * rates depend only on the set of flows, and nothing moves within a nanosecond, so this is exact.
 *
 * Memory: flows live in a slot array recycled through a free list; each slot keeps its path
 * buffer for reuse, classes (with their member lists) are recycled through a free list, and
 * the component search and solver use scratch arrays of the net: nothing is allocated per event
 * once the arrays have grown. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/net/flow.h"
#include "sim/net/maxmin.h"


#define FLOW_LIVE G_MAXUINT32
#define FLOW_NONE (G_MAXUINT32 - 1)
/* Remaining bytes below this fraction of the flow's size are rounding noise: ~10^4 lazy updates
 * at ~1e-16 relative error each stay far below it, while at any rate it is far less than 1 ns of
 * transfer for flows shorter than 1000 s. */
#define FINISH_REL 1e-12
/* Transition cache of one start or detach: (class left, capacity) -> class entered. */
#define MOVE_CACHE 64

typedef struct {
  int cls;
  guint32 gen;       /* the class's generation when the entry was made: stale once it differs */
  int mult;          /* times the flow crosses each link of the class */
} Entry;

typedef struct {
  int cls;
  guint32 gen;
} ClassRef;

typedef struct {
  SimFlowDoneFn done;
  gpointer user;
  guint64 arg;
} MemberCb;

struct Batched {
  SimFlowPath *path;
  double bytes, weight;
  MemberCb cb;
};

typedef struct {
  int *occ;          /* its path as atoms, each as often as the flow crosses each of its links */
  int n_occ, cap_occ;
  Entry *ent;      /* the classes of its links (stale entries are dropped when walked) */
  int n_ent, cap_ent;
  double bytes;
  double remaining;  /* at updated_ns */
  gint64 updated_ns;
  double rate;
  guint64 event;     /* pending completion event, 0 if none */
  SimFlowDoneFn done;
  SimFlowDoneManyFn done_many; /* set: called once with the members that end (sim_flow_net_start_union) */
  gpointer user;
  guint64 arg;
  guint32 gen;
  guint32 next;      /* free list, or FLOW_LIVE */
  guint32 xmark;     /* epoch in which it was added to the seeds of the next local try */
  guint32 cmark;     /* check stamp in which it was listed for the bundle check */
  ClassRef hint;     /* the class last found to be its bottleneck, tried first */
  SimFlowPath *bundle; /* a bundle's union path (its members: bundle->members), NULL for one flow */
  MemberCb *cbs;     /* with has_cbs: each member's callback (sim_flow_net_start_batched); kept */
  int cap_cbs;       /* with the slot for its next flow */
  gboolean has_cbs;
} Flow;

/* The fields of a flow that solves read for every member of every class they touch, apart from
 * the rest for locality: its rate (a copy of Flow.rate), the epoch of the last search or local
 * solve that took it in and of the last check that looked at it, and its index in the solve. */
typedef struct {
  double rate;
  double w;          /* its weight in the fair sharing (sim_flow_net_start_weighted) */
  guint32 mark;
  guint32 vmark;     /* epoch of the last local check that looked at it */
  int local;
} Hot;

typedef struct {
  guint32 flow;
  int mult;          /* times it crosses each link of the class */
} Member;

/* Links that every path so far crossed alike (see "Atoms" at the top). */
typedef struct {
  double capacity;
  int cls;             /* its class; -1: no flow crosses it */
  double bytes;        /* sizes of the finished flows that crossed each of its links */
  int head, size;      /* its links: a list through next_link / prev_link */
  guint32 gen;         /* bumped when links leave it: paths naming it are re-derived */
  /* refinement scratch, reset after each path */
  int seen;            /* distinct links of the path in it */
  int count0;          /* the first such link's count in the path */
  gboolean mixed;      /* the path crosses its links different numbers of times */
  int target;          /* atom taking its links of count0 (-1: not yet made) */
  gboolean whole;      /* the path crosses all its links */
  gboolean emitted;
} Atom;

struct SimFlowPath {
  guint32 *links;      /* as registered */
  int n_links;
  int *occ;            /* derived atoms, as Flow.occ */
  guint32 *gen;        /* each occurrence's atom generation when derived */
  int n_occ, cap_occ;
  SimFlowPath **members; /* a bundle's union path: its member paths, whose links it concatenates */
  int n_members;
  guint32 *member_hint;  /* per member: the link found to bind it last (first: its first link), tried first */
  guint32 *hints;        /* the distinct links of member_hint, as of the last member-by-member check */
  int n_hints;           /* -1: none yet */
  guint hash;
};

/* Atoms with one member multiset and capacity; the key is (sig1, sig2, n_members, capacity). */
typedef struct {
  guint64 sig1, sig2;
  double capacity;
  int n_members;     /* crossings per link: the sum of the members' mult */
  Member *members;   /* distinct flows */
  int n_flows, cap_members;
  guint32 mark;
  int local;         /* index in the current solve */
  guint32 smark;     /* epoch of load and max_rate */
  double load, max_rate;
  int id;
  int next_free;
  guint32 hash;      /* class_key_hash of its key, while it is in the index */
} Class;

typedef struct {
  int from;
  guint32 from_gen;
  double capacity;
  int to;
  guint32 to_gen;
  guint32 stamp;
} Move;

struct SimFlowNet {
  SimEngine *engine;
  int n_links;
  Atom *atoms;
  int n_atoms, cap_atoms;
  int *atom_of, *next_link, *prev_link;  /* per link */
  int *pcount;                           /* per link: times the path being derived crosses it */
  guint32 *touched;                      /* the path's distinct links, in order of first crossing */
  int cap_touched;
  int *touched_atoms, cap_touched_atoms; /* the atoms those links were in */
  int *scratch_occ;                      /* a raw start's derived path */
  int cap_scratch_occ;
  GHashTable *mixed_targets;             /* (atom, count) -> atom, for paths crossing an atom unevenly */
  GPtrArray *paths;                      /* SimFlowPath*, owned */
  GHashTable *bundles;                   /* union paths by their members (SimFlowPath* -> itself) */
  guint32 *ulinks;                       /* a union path's links being concatenated */
  int cap_ulinks;
  SimFlowPath **msplit;                  /* a split's members: covered first, then the others */
  int cap_msplit;
  int *midx;                             /* their indices in the bundle, in the same order */
  int cap_midx;
  MemberCb *cb_scratch;                  /* a split's or an end's callbacks */
  int cap_cb_scratch;
  /* flows started batched at the current nanosecond, not yet in the net (flush_batched) */
  struct Batched *pend;
  int n_pend, cap_pend;
  double *pend_sens;                     /* n_sens per pending start: its starter's derivatives */
  int cap_pend_sens;
  const double *sens_from;               /* set: what a start's derivatives are, not the event's */
  SimFlowPath **pend_paths;
  MemberCb *pend_cbs;
  guint8 *pend_taken;
  int *pend_order;
  int cap_pend_scratch;
  guint32 *check;                        /* bundles to check after this recompute */
  int n_check, cap_check;
  guint32 check_stamp;
  /* per link, allocated at the first bundle check: whether it binds at the rate of the bundle being
   * checked, valid where lmark is lstamp (one stamp per bundle checked) */
  guint32 *lmark, lstamp;
  guint8 *lbinds;
  Flow *flows;
  Hot *hot;
  guint32 n_flows, cap_flows, free_flow;
  int active;
  guint64 recompute_event;
  guint32 epoch;
  SimFlowNetStats stats;
  Class **classes;
  int n_classes, cap_classes, free_class;
  /* Per class, apart from the struct (a start or end reads them for every atom it moves): its
   * generation, bumped when it dies so entries and cache lines naming it go stale (an equal
   * generation is the same class, alive), and its atoms. */
  guint32 *class_gen;
  int *class_atoms;
  int cap_class_meta;
  /* Live classes by key: open addressing with linear probing, ids (-1 empty), at most half full;
   * a start or end looks up a class per atom it moves, so the probe is kept inline. */
  int *class_slot;
  guint32 class_mask, class_live;
  Move moves[MOVE_CACHE];
  guint32 move_stamp;
  /* seeds of the next recompute */
  ClassRef *dirty_classes;
  int n_dirty_classes, cap_dirty_classes;
  guint32 *dirty_flows;
  int n_dirty_flows, cap_dirty_flows;
  /* scratch */
  int *comp_classes, cap_comp_classes;
  guint32 *comp_flows, cap_comp_flows;
  int *start, cap_start;
  guint32 *path;
  int cap_path;
  double *capacity, *rates, *weights;
  int cap_capacity, cap_rates, cap_weights;
  double *bound, *load_bound;
  int *remap;
  int cap_bound, cap_load_bound, cap_remap;
  int *twin_table, cap_twin;  /* local solve: open addressing over twin_key */
  guint64 *twin_key;
  int cap_twin_key;
  SimMaxmin *solver;
  /* Sensitivities (sim_engine_enable_sens on the engine before the net was made): per flow,
   * n_sens derivatives (start_sens). */
  int n_sens;
  double *fsens;
  guint32 cap_fsens;
};

#define GROW(ptr, cap, need, type)                                                                 \
  do {                                                                                             \
    if ((need) > (cap))                                                                            \
      {                                                                                            \
        (cap) = MAX ((need), 2 * (cap));                                                           \
        (ptr) = g_renew (type, (ptr), (cap));                                                      \
      }                                                                                            \
  } while (0)

/* splitmix64's finaliser: members' flows summed through it give an order-free link signature */
static inline guint64
flow_mix (guint64 z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A second, independent signature (another seed through the same finaliser): a false match of
 * two multisets needs both 64-bit sums to collide. */
static inline guint64
flow_mix2 (guint32 fi)
{
  return flow_mix ((guint64) fi ^ 0xD6E8FEB86659FD93ull);
}

static inline guint32
class_key_hash (const Class *k)
{
  guint64 bits;
  memcpy (&bits, &k->capacity, sizeof bits);
  guint64 h = flow_mix (k->sig1 ^ (k->sig2 * 0x9E3779B97F4A7C15ull) ^ ((guint64) k->n_members << 40) ^ bits);
  return (guint32) (h ^ (h >> 32));
}

static inline gboolean
class_key_equal (const Class *x, const Class *y)
{
  return x->sig1 == y->sig1 && x->sig2 == y->sig2 && x->n_members == y->n_members && x->capacity == y->capacity;
}

/* The live class with k's key (k->hash set), or -1. */
static int
class_index_find (const SimFlowNet *net, const Class *k)
{
  for (guint32 i = k->hash & net->class_mask;; i = (i + 1) & net->class_mask)
    {
      int id = net->class_slot[i];
      if (id < 0 || (net->classes[id]->hash == k->hash && class_key_equal (net->classes[id], k)))
        return id;
    }
}

static void
class_index_put (SimFlowNet *net, int id)
{
  guint32 i = net->classes[id]->hash & net->class_mask;
  while (net->class_slot[i] >= 0)
    i = (i + 1) & net->class_mask;
  net->class_slot[i] = id;
}

static void
class_index_add (SimFlowNet *net, int id)
{
  if (2 * (net->class_live + 1) > net->class_mask + 1)
    {
      guint32 size = 2 * (net->class_mask + 1);
      int *old = net->class_slot;
      guint32 old_size = net->class_mask + 1;
      net->class_slot = g_new (int, size);
      for (guint32 i = 0; i < size; i++)
        net->class_slot[i] = -1;
      net->class_mask = size - 1;
      for (guint32 i = 0; i < old_size; i++)
        if (old[i] >= 0)
          class_index_put (net, old[i]);
      g_free (old);
    }
  class_index_put (net, id);
  net->class_live++;
}

/* Removal by backward shift (no tombstones): each later entry of the run that the hole cuts off from
 * its home slot moves into the hole. */
static void
class_index_remove (SimFlowNet *net, int id)
{
  guint32 m = net->class_mask, i = net->classes[id]->hash & m;
  while (net->class_slot[i] != id)
    i = (i + 1) & m;
  for (guint32 j = (i + 1) & m; net->class_slot[j] >= 0; j = (j + 1) & m)
    {
      guint32 home = net->classes[net->class_slot[j]]->hash & m;
      /* the entry at j stays if its home lies cyclically in (i, j] */
      if (((j - home) & m) < ((j - i) & m))
        continue;
      net->class_slot[i] = net->class_slot[j];
      i = j;
    }
  net->class_slot[i] = -1;
  net->class_live--;
}

static void recompute_cb (SimEngine *engine, gpointer data, guint64 arg);
static void complete_cb (SimEngine *engine, gpointer data, guint64 arg);

static inline double
elapsed_s (gint64 from_ns, gint64 to_ns)
{
  return (double) (to_ns - from_ns) * 1e-9;
}

static void
schedule_recompute (SimFlowNet *net)
{
  if (net->recompute_event == 0)
    net->recompute_event = sim_engine_after (net->engine, 0, recompute_cb, net, 0);
}

/* The first nanosecond at which the flow's remaining bytes have all arrived. Callers bring the
 * flow's snapshot to the current time first (updated_ns == now). */
static gint64
finish_time (const SimFlowNet *net, const Flow *f)
{
  gint64 now = sim_engine_now (net->engine);
  if (f->remaining <= FINISH_REL * f->bytes || isinf (f->rate))
    return now;
  /* Done means remaining <= FINISH_REL of the size, so aim for that, not for exactly zero:
   * otherwise a quotient like 2999850.0000000005 (an exact 2999850 after rounding) costs 1 ns. */
  double ns = ceil ((f->remaining - FINISH_REL * f->bytes) / f->rate * 1e9);
  double horizon = (double) (G_MAXINT64 / 2 - now);
  return now + (gint64) MIN (MAX (ns, 1.0), horizon);
}

/* Flow fi's n derivatives: those of the event that started it. */
static inline double *
flow_sens (SimFlowNet *net, guint32 fi)
{
  int n = net->n_sens;
  if (fi >= net->cap_fsens)
    {
      guint32 cap = MAX (net->cap_flows, fi + 1);
      net->fsens = g_renew (double, net->fsens, (gsize) cap * n);
      net->cap_fsens = cap;
    }
  return net->fsens + (gsize) fi * n;
}

/* A flow's end moves with its start: the sensitivities do not follow a flow through the max-min
 * shares of the flows around it. Followed exactly (the remaining bytes' derivatives through every
 * rate change), they are the slopes of a piecewise-linear function whose pieces, at deck scale,
 * are far shorter than any step a fit takes: tried 2026-11-27 on the 1,024-GPU GB200 row, the slope
 * came out 10^7 times the forward difference's. */
static void
start_sens (SimFlowNet *net, guint32 fi)
{
  int n = net->n_sens;
  if (n > 0)
    memcpy (flow_sens (net, fi), net->sens_from ? net->sens_from : sim_engine_sens (net->engine),
            sizeof (double) * n);
}

static void
plan_completion (SimFlowNet *net, Flow *f, guint32 index)
{
  if (f->event)
    sim_engine_cancel (net->engine, f->event);
  if (net->n_sens > 0)
    sim_engine_next_sens (net->engine, flow_sens (net, index)); /* its start's */
  f->event = sim_engine_at (net->engine, finish_time (net, f), complete_cb, net, index);
}

/* ---- classes ---------------------------------------------------------------------------------- */

/* One link fewer in class id; the class dies with its last link. */
static void
class_unref (SimFlowNet *net, int id)
{
  if (--net->class_atoms[id] > 0)
    return;
  Class *c = net->classes[id];
  class_index_remove (net, id);
  net->class_gen[id]++;
  c->next_free = net->free_class;
  net->free_class = id;
}

/* The class of `from`'s members plus (delta 1) or minus (delta -1) one crossing of flow fi, on
 * links of this capacity (from -1: no members): found by key, or made and its flows told (one
 * entry each, with the times they cross each of its links). -1 when no member is left. */
static int
class_next (SimFlowNet *net, int from, guint32 fi, int delta, double capacity)
{
  Class key = { .capacity = capacity };
  const Class *o = from >= 0 ? net->classes[from] : NULL;
  if (o != NULL)
    key = (Class) { .sig1 = o->sig1, .sig2 = o->sig2, .capacity = o->capacity, .n_members = o->n_members };
  key.sig1 += (guint64) delta * flow_mix (fi);
  key.sig2 += (guint64) delta * flow_mix2 (fi);
  key.n_members += delta;
  if (key.n_members == 0)
    return -1;
  key.hash = class_key_hash (&key);
  int found_id = class_index_find (net, &key);
  if (found_id >= 0)
    return found_id;
  Class *c;
  int id = net->free_class;
  if (id >= 0)
    {
      c = net->classes[id];
      net->free_class = c->next_free;
    }
  else
    {
      GROW (net->classes, net->cap_classes, net->n_classes + 1, Class *);
      if (net->n_classes + 1 > net->cap_class_meta)
        {
          net->cap_class_meta = MAX (net->n_classes + 1, 2 * net->cap_class_meta);
          net->class_gen = g_renew (guint32, net->class_gen, net->cap_class_meta);
          net->class_atoms = g_renew (int, net->class_atoms, net->cap_class_meta);
        }
      id = net->n_classes++;
      c = net->classes[id] = g_new0 (Class, 1);
      c->id = id;
      net->class_gen[id] = 0;
    }
  o = from >= 0 ? net->classes[from] : NULL; /* classes[] may have moved */
  c->sig1 = key.sig1;
  c->sig2 = key.sig2;
  c->capacity = key.capacity;
  c->n_members = key.n_members;
  c->hash = key.hash;
  net->class_atoms[id] = 0;
  c->mark = 0;
  c->n_flows = 0;
  GROW (c->members, c->cap_members, (o ? o->n_flows : 0) + 1, Member);
  gboolean found = FALSE;
  for (int m = 0; o != NULL && m < o->n_flows; m++)
    {
      Member mb = o->members[m];
      if (mb.flow == fi)
        {
          found = TRUE;
          mb.mult += delta;
          if (mb.mult == 0)
            continue;
        }
      c->members[c->n_flows++] = mb;
    }
  if (!found)
    {
      g_assert (delta > 0);
      c->members[c->n_flows++] = (Member) { fi, 1 };
    }
  class_index_add (net, id);
  for (int m = 0; m < c->n_flows; m++)
    {
      Flow *f = &net->flows[c->members[m].flow];
      GROW (f->ent, f->cap_ent, f->n_ent + 1, Entry);
      f->ent[f->n_ent++] = (Entry) { id, net->class_gen[id], c->members[m].mult };
    }
  return id;
}

/* Atom ai's links each gain (delta 1) or lose (delta -1) one crossing of flow fi: the atom moves to
 * the class of its new members. Returns that class (-1: none left) and whether it was a cache miss
 * (a new destination for this start or detach). */
static int
atom_move (SimFlowNet *net, int ai, guint32 fi, int delta, gboolean *miss)
{
  Atom *at = &net->atoms[ai];
  int from = at->cls;
  guint32 from_gen = from >= 0 ? net->class_gen[from] : 0;
  guint64 cap_bits;
  memcpy (&cap_bits, &at->capacity, sizeof cap_bits);
  guint64 h = flow_mix (((guint64) (guint32) from << 32) ^ cap_bits);
  Move *mv = &net->moves[h & (MOVE_CACHE - 1)];
  int to;
  *miss = FALSE;
  if (mv->stamp == net->move_stamp && mv->from == from && mv->from_gen == from_gen
      && mv->capacity == at->capacity
      && (mv->to < 0 || net->class_gen[mv->to] == mv->to_gen))
    to = mv->to;
  else
    {
      to = class_next (net, from, fi, delta, at->capacity);
      *mv = (Move) { from, from_gen, at->capacity, to, to >= 0 ? net->class_gen[to] : 0, net->move_stamp };
      *miss = TRUE;
    }
  if (to >= 0)
    net->class_atoms[to]++;
  if (from >= 0)
    class_unref (net, from);
  at->cls = to;
  return to;
}

static void
next_move_stamp (SimFlowNet *net)
{
  if (++net->move_stamp == 0)
    {
      memset (net->moves, 0, sizeof net->moves);
      net->move_stamp = 1;
    }
}

/* ---- atoms ------------------------------------------------------------------------------------ */

static int
atom_new (SimFlowNet *net, double capacity)
{
  GROW (net->atoms, net->cap_atoms, net->n_atoms + 1, Atom);
  int a = net->n_atoms++;
  net->atoms[a] = (Atom) { .capacity = capacity, .cls = -1, .head = -1, .target = -1 };
  return a;
}

static void
atom_add_link (SimFlowNet *net, int a, int l)
{
  Atom *at = &net->atoms[a];
  net->atom_of[l] = a;
  net->prev_link[l] = -1;
  net->next_link[l] = at->head;
  if (at->head >= 0)
    net->prev_link[at->head] = l;
  at->head = l;
  at->size++;
}

static void
atom_remove_link (SimFlowNet *net, int a, int l)
{
  Atom *at = &net->atoms[a];
  int p = net->prev_link[l], n = net->next_link[l];
  if (p >= 0)
    net->next_link[p] = n;
  else
    at->head = n;
  if (n >= 0)
    net->prev_link[n] = p;
  at->size--;
}

/* A new atom for links leaving atom a: the same capacity, class and bytes, and every flow that
 * crosses a's links now also crosses the new atom's, as often. */
static int
atom_split_off (SimFlowNet *net, int a)
{
  int b = atom_new (net, net->atoms[a].capacity);
  Atom *from = &net->atoms[a], *to = &net->atoms[b];
  to->cls = from->cls;
  to->bytes = from->bytes;
  from->gen++;
  if (to->cls >= 0)
    {
      Class *c = net->classes[to->cls];
      net->class_atoms[to->cls]++;
      for (int m = 0; m < c->n_flows; m++)
        {
          Flow *f = &net->flows[c->members[m].flow];
          GROW (f->occ, f->cap_occ, f->n_occ + c->members[m].mult, int);
          for (int k = 0; k < c->members[m].mult; k++)
            f->occ[f->n_occ++] = b;
        }
    }
  return b;
}

/* Derives a path's atoms: first refines the atoms so that each is crossed by the path evenly (all
 * of its links the same number of times, or none), splitting off the links it crosses otherwise;
 * then lists each atom the path meets, in order of first crossing, as often as the path crosses
 * each of its links. Costs O(n_links) with the per-link scratch; *occ grows as needed. */
static int
derive (SimFlowNet *net, const guint32 *links, int n_links, int **occ, int *cap_occ, guint32 **gen)
{
  int nt = 0, n_ta = 0;
  for (int k = 0; k < n_links; k++)
    if (net->pcount[links[k]]++ == 0)
      {
        GROW (net->touched, net->cap_touched, nt + 1, guint32);
        net->touched[nt++] = links[k];
      }
  for (int t = 0; t < nt; t++)
    {
      int l = (int) net->touched[t];
      int a = net->atom_of[l];
      Atom *at = &net->atoms[a];
      if (at->seen++ == 0)
        {
          at->count0 = net->pcount[l];
          GROW (net->touched_atoms, net->cap_touched_atoms, n_ta + 1, int);
          net->touched_atoms[n_ta++] = a;
        }
      else if (net->pcount[l] != at->count0)
        at->mixed = TRUE;
    }
  for (int t = 0; t < n_ta; t++)
    net->atoms[net->touched_atoms[t]].whole = net->atoms[net->touched_atoms[t]].seen == net->atoms[net->touched_atoms[t]].size;
  for (int t = 0; t < nt; t++)
    {
      int l = (int) net->touched[t];
      int a = net->atom_of[l];
      Atom *at = &net->atoms[a];
      if (!at->mixed && at->whole)
        continue;  /* crossed evenly and whole: stays */
      int dest;
      if (!at->mixed)
        {
          if (at->target < 0)
            {
              int b = atom_split_off (net, a);
              net->atoms[a].target = b;  /* atoms may have moved */
            }
          dest = net->atoms[a].target;
        }
      else
        {
          /* Uneven: one atom per count. With the whole atom crossed, the links of its first count
           * stay. */
          if (at->whole && net->pcount[l] == at->count0)
            continue;
          gint64 key = ((gint64) a << 32) | (guint32) net->pcount[l];
          gpointer hit;
          if (g_hash_table_lookup_extended (net->mixed_targets, &key, NULL, &hit))
            dest = GPOINTER_TO_INT (hit);
          else
            {
              dest = atom_split_off (net, a);
              g_hash_table_insert (net->mixed_targets, g_memdup2 (&key, sizeof key), GINT_TO_POINTER (dest));
            }
        }
      atom_remove_link (net, a, l);
      atom_add_link (net, dest, l);
    }
  if (g_hash_table_size (net->mixed_targets) > 0)
    {
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, net->mixed_targets);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          g_hash_table_iter_steal (&it);
          g_free (key);
        }
    }
  /* Its atoms, in order of first crossing. */
  int n = 0;
  for (int t = 0; t < nt; t++)
    {
      int l = (int) net->touched[t];
      Atom *at = &net->atoms[net->atom_of[l]];
      if (!at->emitted)
        {
          at->emitted = TRUE;
          int cap_was = *cap_occ;
          GROW (*occ, *cap_occ, n + net->pcount[l], int);
          if (gen && *cap_occ != cap_was)
            *gen = g_renew (guint32, *gen, *cap_occ);
          for (int k = 0; k < net->pcount[l]; k++)
            {
              if (gen)
                (*gen)[n] = at->gen;
              (*occ)[n++] = net->atom_of[l];
            }
        }
    }
  for (int t = 0; t < nt; t++)
    {
      int l = (int) net->touched[t];
      net->pcount[l] = 0;
      net->atoms[net->atom_of[l]].emitted = FALSE;
    }
  for (int t = 0; t < n_ta; t++)
    {
      Atom *at = &net->atoms[net->touched_atoms[t]];
      at->seen = 0;
      at->mixed = FALSE;
      at->target = -1;
    }
  return n;
}

/* ---- the net ---------------------------------------------------------------------------------- */

static guint
members_hash (SimFlowPath *const *members, int n)
{
  guint64 h = (guint64) n;
  for (int m = 0; m < n; m++)
    h = flow_mix (h ^ (guint64) (guintptr) members[m]);
  return (guint) (h ^ (h >> 32));
}

static guint
bundle_hash (gconstpointer p)
{
  return ((const SimFlowPath *) p)->hash;
}

static gboolean
bundle_equal (gconstpointer a, gconstpointer b)
{
  const SimFlowPath *x = a, *y = b;
  return x->n_members == y->n_members
         && memcmp (x->members, y->members, (gsize) x->n_members * sizeof (SimFlowPath *)) == 0;
}

SimFlowNet *
sim_flow_net_new (SimEngine *engine, const double *capacities, int n_links)
{
  g_return_val_if_fail (engine != NULL, NULL);
  g_return_val_if_fail (n_links >= 0 && (n_links == 0 || capacities != NULL), NULL);
  for (int l = 0; l < n_links; l++)
    g_return_val_if_fail (capacities[l] > 0 && isfinite (capacities[l]), NULL);
  SimFlowNet *net = g_new0 (SimFlowNet, 1);
  net->engine = engine;
  net->n_links = n_links;
  net->atom_of = g_new (int, MAX (n_links, 1));
  net->next_link = g_new (int, MAX (n_links, 1));
  net->prev_link = g_new (int, MAX (n_links, 1));
  net->pcount = g_new0 (int, MAX (n_links, 1));
  /* One atom per capacity: no path has told its links apart yet. */
  g_autoptr (GHashTable) by_cap = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (int l = 0; l < n_links; l++)
    {
      gint64 bits;
      memcpy (&bits, &capacities[l], sizeof bits);
      gpointer hit;
      int a;
      if (g_hash_table_lookup_extended (by_cap, &bits, NULL, &hit))
        a = GPOINTER_TO_INT (hit);
      else
        {
          a = atom_new (net, capacities[l]);
          g_hash_table_insert (by_cap, g_memdup2 (&bits, sizeof bits), GINT_TO_POINTER (a));
        }
      atom_add_link (net, a, l);
    }
  net->free_flow = FLOW_NONE;
  net->free_class = -1;
  net->class_mask = 63;
  net->class_slot = g_new (int, 64);
  for (int i = 0; i < 64; i++)
    net->class_slot[i] = -1;
  net->mixed_targets = g_hash_table_new (g_int64_hash, g_int64_equal);
  net->paths = g_ptr_array_new ();
  net->bundles = g_hash_table_new (bundle_hash, bundle_equal);
  net->move_stamp = 1;
  net->solver = sim_maxmin_new ();
  net->n_sens = sim_engine_sens_n (engine);
  return net;
}

void
sim_flow_net_free (SimFlowNet *net)
{
  if (net == NULL)
    return;
  if (net->recompute_event)
    sim_engine_cancel (net->engine, net->recompute_event);
  for (guint32 i = 0; i < net->n_flows; i++)
    {
      if (net->flows[i].next == FLOW_LIVE && net->flows[i].event)
        sim_engine_cancel (net->engine, net->flows[i].event);
      g_free (net->flows[i].occ);
      g_free (net->flows[i].ent);
      g_free (net->flows[i].cbs);
    }
  for (int c = 0; c < net->n_classes; c++)
    {
      g_free (net->classes[c]->members);
      g_free (net->classes[c]);
    }
  for (guint i = 0; i < net->paths->len; i++)
    {
      SimFlowPath *p = net->paths->pdata[i];
      g_free (p->links);
      g_free (p->occ);
      g_free (p->gen);
      g_free (p->members);
      g_free (p->member_hint);
      g_free (p->hints);
      g_free (p);
    }
  g_ptr_array_free (net->paths, TRUE);
  g_hash_table_destroy (net->bundles);
  g_free (net->ulinks);
  g_free (net->msplit);
  g_free (net->midx);
  g_free (net->cb_scratch);
  g_free (net->pend);
  g_free (net->pend_sens);
  g_free (net->pend_paths);
  g_free (net->pend_cbs);
  g_free (net->pend_taken);
  g_free (net->pend_order);
  g_free (net->check);
  g_free (net->lmark);
  g_free (net->lbinds);
  g_hash_table_destroy (net->mixed_targets);
  g_free (net->class_slot);
  g_free (net->classes);
  g_free (net->class_gen);
  g_free (net->class_atoms);
  g_free (net->fsens);
  g_free (net->atoms);
  g_free (net->atom_of);
  g_free (net->next_link);
  g_free (net->prev_link);
  g_free (net->pcount);
  g_free (net->touched);
  g_free (net->touched_atoms);
  g_free (net->scratch_occ);
  g_free (net->flows);
  g_free (net->hot);
  g_free (net->dirty_classes);
  g_free (net->dirty_flows);
  g_free (net->comp_classes);
  g_free (net->comp_flows);
  g_free (net->start);
  g_free (net->path);
  g_free (net->capacity);
  g_free (net->rates);
  g_free (net->weights);
  g_free (net->bound);
  g_free (net->load_bound);
  g_free (net->remap);
  g_free (net->twin_table);
  g_free (net->twin_key);
  sim_maxmin_free (net->solver);
  g_free (net);
}

guint64
sim_flow_net_start (SimFlowNet *net, const guint32 *links, int n_links, double bytes,
                    SimFlowDoneFn done, gpointer user, guint64 arg)
{
  return sim_flow_net_start_weighted (net, links, n_links, bytes, 1.0, done, user, arg);
}

/* Puts flow i (on no atom) on the atoms occ[0..n_occ): each moves to the class of its flows plus
 * this one. The flow's component is all the next recompute needs to look at. */
static void
link_flow (SimFlowNet *net, guint32 i, const int *occ, int n_occ)
{
  Flow *f = &net->flows[i];
  GROW (f->occ, f->cap_occ, n_occ, int);
  memcpy (f->occ, occ, (gsize) n_occ * sizeof (int));
  f->n_occ = n_occ;
  next_move_stamp (net);
  for (int k = 0; k < n_occ; k++)
    {
      gboolean miss;
      atom_move (net, occ[k], i, 1, &miss);
    }
  GROW (net->dirty_flows, net->cap_dirty_flows, net->n_dirty_flows + 1, guint32);
  net->dirty_flows[net->n_dirty_flows++] = i;
  schedule_recompute (net);
}

/* Starts a flow over a derived path (occ: atoms, n_occ of them; routed: it has links). */
static guint64
start_occ (SimFlowNet *net, const int *occ, int n_occ, gboolean routed, double bytes, double weight,
           SimFlowDoneFn done, gpointer user, guint64 arg)
{
  guint32 i = net->free_flow;
  if (i != FLOW_NONE)
    net->free_flow = net->flows[i].next;
  else
    {
      g_return_val_if_fail (net->n_flows < FLOW_NONE, 0);
      if (net->n_flows == net->cap_flows)
        {
          net->cap_flows = net->cap_flows ? 2 * net->cap_flows : 64;
          net->flows = g_renew (Flow, net->flows, net->cap_flows);
          net->hot = g_renew (Hot, net->hot, net->cap_flows);
        }
      i = net->n_flows++;
      net->flows[i] = (Flow) { .gen = 1 };
      net->hot[i] = (Hot) { 0 };
    }
  Flow *f = &net->flows[i];
  f->n_occ = 0;
  f->n_ent = 0;
  f->hint = (ClassRef) { -1, 0 };
  f->bundle = NULL;
  f->bytes = bytes;
  f->remaining = bytes;
  f->updated_ns = sim_engine_now (net->engine);
  start_sens (net, i);
  f->rate = net->hot[i].rate = 0;
  net->hot[i].w = weight;
  f->event = 0;
  f->done = done;
  f->done_many = NULL;
  f->has_cbs = FALSE;
  f->user = user;
  f->arg = arg;
  f->next = FLOW_LIVE;
  net->hot[i].mark = 0;
  net->active++;

  if (!routed || bytes == 0)
    {
      /* Nothing to share: done at once, but through the engine like every completion. */
      f->rate = net->hot[i].rate = !routed ? INFINITY : 0;
      if (net->sens_from)
        sim_engine_next_sens (net->engine, net->sens_from);
      f->event = sim_engine_after (net->engine, 0, complete_cb, net, i);
    }
  else
    link_flow (net, i, occ, n_occ);
  return ((guint64) f->gen << 32) | i;
}

guint64
sim_flow_net_start_weighted (SimFlowNet *net, const guint32 *links, int n_links, double bytes, double weight,
                             SimFlowDoneFn done, gpointer user, guint64 arg)
{
  g_return_val_if_fail (net != NULL, 0);
  g_return_val_if_fail (weight > 0 && isfinite (weight), 0);
  g_return_val_if_fail (n_links >= 0 && (n_links == 0 || links != NULL), 0);
  g_return_val_if_fail (bytes >= 0 && isfinite (bytes), 0);
  for (int k = 0; k < n_links; k++)
    g_return_val_if_fail (links[k] < (guint32) net->n_links, 0);
  int n = n_links > 0 && bytes > 0
              ? derive (net, links, n_links, &net->scratch_occ, &net->cap_scratch_occ, NULL)
              : 0;
  return start_occ (net, net->scratch_occ, n, n_links > 0, bytes, weight, done, user, arg);
}

/* Brings a registered path's atoms up to date: still exact while none of them has lost links since
 * it was derived. */
static void
path_derive (SimFlowNet *net, SimFlowPath *path)
{
  gboolean fresh = path->n_occ >= 0;
  for (int k = 0; fresh && k < path->n_occ; k++)
    fresh = net->atoms[path->occ[k]].gen == path->gen[k];
  if (!fresh)
    path->n_occ = derive (net, path->links, path->n_links, &path->occ, &path->cap_occ, &path->gen);
}

static SimFlowPath *
path_new (SimFlowNet *net, const guint32 *links, int n_links)
{
  SimFlowPath *p = g_new0 (SimFlowPath, 1);
  p->links = n_links > 0 ? g_memdup2 (links, (gsize) n_links * sizeof (guint32)) : NULL;
  p->n_links = n_links;
  p->n_occ = -1;  /* derived at its first start */
  g_ptr_array_add (net->paths, p);
  return p;
}

SimFlowPath *
sim_flow_net_path (SimFlowNet *net, const guint32 *links, int n_links)
{
  g_return_val_if_fail (net != NULL, NULL);
  g_return_val_if_fail (n_links >= 0 && (n_links == 0 || links != NULL), NULL);
  for (int k = 0; k < n_links; k++)
    g_return_val_if_fail (links[k] < (guint32) net->n_links, NULL);
  return path_new (net, links, n_links);
}

/* The path of members[0..n) (n >= 2) as one bundle: their links concatenated, made once per member
 * list and kept (a representative starts the same sibling flows every layer). */
static SimFlowPath *
bundle_path (SimFlowNet *net, SimFlowPath *const *members, int n)
{
  SimFlowPath key = { .members = (SimFlowPath **) members, .n_members = n, .hash = members_hash (members, n) };
  SimFlowPath *p = g_hash_table_lookup (net->bundles, &key);
  if (p != NULL)
    return p;
  int total = 0;
  for (int m = 0; m < n; m++)
    total += members[m]->n_links;
  GROW (net->ulinks, net->cap_ulinks, total, guint32);
  int o = 0;
  for (int m = 0; m < n; m++)
    {
      memcpy (net->ulinks + o, members[m]->links, (gsize) members[m]->n_links * sizeof (guint32));
      o += members[m]->n_links;
    }
  p = path_new (net, net->ulinks, total);
  p->members = g_memdup2 (members, (gsize) n * sizeof (SimFlowPath *));
  p->member_hint = g_new (guint32, n);
  for (int m = 0; m < n; m++)
    p->member_hint[m] = members[m]->links[0];
  p->n_hints = -1;
  p->n_members = n;
  p->hash = key.hash;
  g_hash_table_add (net->bundles, p);
  return p;
}

/* Starts p, one routed path or a bundle's union path, as one flow. */
static guint32
start_union (SimFlowNet *net, SimFlowPath *p, double bytes, double weight, SimFlowDoneFn done,
             SimFlowDoneManyFn done_many, gpointer user, guint64 arg)
{
  path_derive (net, p);
  guint32 i = (guint32) start_occ (net, p->occ, p->n_occ, TRUE, bytes, weight, done, user, arg);
  net->flows[i].done_many = done_many;
  net->flows[i].bundle = p->members ? p : NULL;
  net->active += MAX (p->n_members, 1) - 1;
  return i;
}

/* Starts the members (n >= 1, every one routed) as one flow: a bundle of n, or the one path. */
static guint32
start_members (SimFlowNet *net, SimFlowPath *const *members, int n, double bytes, double weight,
               SimFlowDoneFn done, SimFlowDoneManyFn done_many, gpointer user, guint64 arg)
{
  return start_union (net, n == 1 ? members[0] : bundle_path (net, members, n), bytes, weight, done, done_many,
                      user, arg);
}

/* Whether paths[0..n) can run as one bundle: two or more, every one with links. */
static gboolean
bundleable (SimFlowPath *const *paths, int n)
{
  for (int m = 0; m < n; m++)
    if (paths[m]->n_links == 0)
      return FALSE;
  return n >= 2;
}

SimFlowPath *
sim_flow_net_bundle_path (SimFlowNet *net, SimFlowPath *const *paths, int n)
{
  g_return_val_if_fail (net != NULL && paths != NULL && n >= 2, NULL);
  return bundleable (paths, n) ? bundle_path (net, paths, n) : NULL;
}

void
sim_flow_net_start_union (SimFlowNet *net, SimFlowPath *bundle, double bytes, double weight,
                          SimFlowDoneManyFn done, gpointer user, guint64 arg)
{
  g_return_if_fail (net != NULL && bundle != NULL && bundle->members != NULL);
  g_return_if_fail (weight > 0 && isfinite (weight));
  g_return_if_fail (bytes > 0 && isfinite (bytes));
  g_return_if_fail (done != NULL);
  net->stats.bundles++;
  start_union (net, bundle, bytes, weight, NULL, done, user, arg);
}

void
sim_flow_net_start_bundle (SimFlowNet *net, SimFlowPath *const *paths, int n, double bytes, double weight,
                           SimFlowDoneFn done, gpointer user, guint64 arg)
{
  g_return_if_fail (net != NULL && n >= 0 && (n == 0 || paths != NULL));
  g_return_if_fail (weight > 0 && isfinite (weight));
  g_return_if_fail (bytes >= 0 && isfinite (bytes));
  if (bytes == 0 || !bundleable (paths, n))
    {
      for (int m = 0; m < n; m++)
        sim_flow_net_start_path (net, paths[m], bytes, weight, done, user, arg);
      return;
    }
  net->stats.bundles++;
  start_members (net, paths, n, bytes, weight, done, NULL, user, arg);
}

void
sim_flow_net_start_batched (SimFlowNet *net, SimFlowPath *path, double bytes, double weight, SimFlowDoneFn done,
                            gpointer user, guint64 arg)
{
  g_return_if_fail (net != NULL && path != NULL);
  g_return_if_fail (weight > 0 && isfinite (weight));
  g_return_if_fail (bytes >= 0 && isfinite (bytes));
  GROW (net->pend, net->cap_pend, net->n_pend + 1, struct Batched);
  if (net->n_sens > 0)
    {
      GROW (net->pend_sens, net->cap_pend_sens, (net->n_pend + 1) * net->n_sens, double);
      memcpy (net->pend_sens + (gsize) net->n_pend * net->n_sens, sim_engine_sens (net->engine),
              sizeof (double) * net->n_sens);
    }
  net->pend[net->n_pend++] = (struct Batched) { path, bytes, weight, { done, user, arg } };
  schedule_recompute (net);
}

/* The batched starts of this nanosecond join the net: those of one size, weight and (with
 * sensitivities) starter's derivatives as one bundle whose members keep their own callbacks (a
 * group of one, or one with a member that has no links or no bytes, as sim_flow_net_start_path
 * would), keys in order of first start, members in order of start. Few keys are gathered key by
 * key; many, sorted. */
#define BATCH_FEW_KEYS 8

static inline const double *
pend_sens_of (const SimFlowNet *net, int i)
{
  return net->n_sens > 0 ? net->pend_sens + (gsize) i * net->n_sens : NULL;
}

static gboolean
same_key (const SimFlowNet *net, int i, int j)
{
  const struct Batched *p = net->pend;
  return p[i].bytes == p[j].bytes && p[i].weight == p[j].weight
         && (net->n_sens == 0
             || memcmp (pend_sens_of (net, i), pend_sens_of (net, j), sizeof (double) * net->n_sens) == 0);
}

/* Starts pend_paths / pend_cbs [0..n), the group of pending start `first`. */
static void
start_batched_group (SimFlowNet *net, int n, int first)
{
  double bytes = net->pend[first].bytes, weight = net->pend[first].weight;
  net->sens_from = pend_sens_of (net, first);  /* each flow's start carries its starter's */
  if (bytes == 0 || !bundleable (net->pend_paths, n))
    for (int m = 0; m < n; m++)
      sim_flow_net_start_path (net, net->pend_paths[m], bytes, weight, net->pend_cbs[m].done, net->pend_cbs[m].user,
                               net->pend_cbs[m].arg);
  else
    {
      net->stats.bundles++;
      guint32 i = start_members (net, net->pend_paths, n, bytes, weight, NULL, NULL, NULL, 0);
      Flow *f = &net->flows[i];
      GROW (f->cbs, f->cap_cbs, n, MemberCb);
      memcpy (f->cbs, net->pend_cbs, sizeof (MemberCb) * (gsize) n);
      f->has_cbs = TRUE;
    }
  net->sens_from = NULL;
}

static int
batched_cmp (const void *a, const void *b, void *user)
{
  const SimFlowNet *net = user;
  int i = *(const int *) a, j = *(const int *) b;
  const struct Batched *x = &net->pend[i], *y = &net->pend[j];
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? -1 : 1;
  if (x->weight != y->weight)
    return x->weight < y->weight ? -1 : 1;
  if (net->n_sens > 0)
    {
      int c = memcmp (pend_sens_of (net, i), pend_sens_of (net, j), sizeof (double) * net->n_sens);
      if (c != 0)
        return c;
    }
  return (i > j) - (i < j);
}

static void
flush_batched (SimFlowNet *net)
{
  int n = net->n_pend;
  if (n <= 0)
    return;
  net->n_pend = 0;
  if (n > net->cap_pend_scratch)
    {
      net->cap_pend_scratch = MAX (n, 2 * net->cap_pend_scratch);
      net->pend_paths = g_renew (SimFlowPath *, net->pend_paths, net->cap_pend_scratch);
      net->pend_cbs = g_renew (MemberCb, net->pend_cbs, net->cap_pend_scratch);
      net->pend_taken = g_renew (guint8, net->pend_taken, net->cap_pend_scratch);
      net->pend_order = g_renew (int, net->pend_order, net->cap_pend_scratch);
    }
  /* the entries are read before any start: a callback never runs inside this */
  const struct Batched *p = net->pend;
  int n_keys = 0, key[BATCH_FEW_KEYS];
  for (int i = 0; i < n && n_keys <= BATCH_FEW_KEYS; i++)
    {
      int k = 0;
      while (k < n_keys && !same_key (net, key[k], i))
        k++;
      if (k == n_keys && n_keys++ < BATCH_FEW_KEYS)
        key[k] = i;
    }
  if (n_keys <= BATCH_FEW_KEYS)
    {
      memset (net->pend_taken, 0, (guint) n);
      for (int i = 0; i < n; i++)
        {
          if (net->pend_taken[i])
            continue;
          int m = 0;
          for (int j = i; j < n; j++)
            if (!net->pend_taken[j] && same_key (net, i, j))
              {
                net->pend_taken[j] = 1;
                net->pend_paths[m] = p[j].path;
                net->pend_cbs[m++] = p[j].cb;
              }
          start_batched_group (net, m, i);
        }
      return;
    }
  int *order = net->pend_order;
  for (int i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, (GCompareDataFunc) batched_cmp, net);
  for (int a = 0; a < n;)
    {
      int b = a, m = 0;
      for (; b < n && same_key (net, order[a], order[b]); b++)
        {
          net->pend_paths[m] = p[order[b]].path;
          net->pend_cbs[m++] = p[order[b]].cb;
        }
      start_batched_group (net, m, order[a]);
      a = b;
    }
}

guint64
sim_flow_net_start_path (SimFlowNet *net, SimFlowPath *path, double bytes, double weight, SimFlowDoneFn done,
                         gpointer user, guint64 arg)
{
  g_return_val_if_fail (net != NULL && path != NULL, 0);
  g_return_val_if_fail (weight > 0 && isfinite (weight), 0);
  g_return_val_if_fail (bytes >= 0 && isfinite (bytes), 0);
  if (path->n_links == 0 || bytes == 0)
    return start_occ (net, NULL, 0, path->n_links > 0, bytes, weight, done, user, arg);
  path_derive (net, path);
  return start_occ (net, path->occ, path->n_occ, TRUE, bytes, weight, done, user, arg);
}

static const Flow *
lookup (const SimFlowNet *net, guint64 id)
{
  guint32 i = (guint32) (id & G_MAXUINT32);
  if (i >= net->n_flows || net->flows[i].next != FLOW_LIVE || net->flows[i].gen != (guint32) (id >> 32))
    return NULL;
  return &net->flows[i];
}

double
sim_flow_net_rate (const SimFlowNet *net, guint64 flow_id)
{
  g_return_val_if_fail (net != NULL, 0);
  const Flow *f = lookup (net, flow_id);
  return f ? f->rate : 0;
}

double
sim_flow_net_link_bytes (const SimFlowNet *net, int link)
{
  g_return_val_if_fail (net != NULL && link >= 0 && link < net->n_links, 0);
  const Atom *at = &net->atoms[net->atom_of[link]];
  gint64 now = sim_engine_now (net->engine);
  double bytes = at->bytes;
  const Class *c = at->cls >= 0 ? net->classes[at->cls] : NULL;
  for (int m = 0; c != NULL && m < c->n_flows; m++)
    {
      const Flow *f = &net->flows[c->members[m].flow];
      bytes += c->members[m].mult * (f->bytes - (f->remaining - f->rate * elapsed_s (f->updated_ns, now)));
    }
  return bytes;
}

int
sim_flow_net_active (const SimFlowNet *net)
{
  g_return_val_if_fail (net != NULL, 0);
  return net->active + net->n_pend;
}

SimFlowNetStats
sim_flow_net_stats (const SimFlowNet *net)
{
  SimFlowNetStats zero = { 0 };
  g_return_val_if_fail (net != NULL, zero);
  return net->stats;
}

/* Moves flow i off its atoms, each to the class of its remaining flows (noted for the next
 * recompute). */
static void
unlink_flow (SimFlowNet *net, guint32 i)
{
  Flow *f = &net->flows[i];
  next_move_stamp (net);
  for (int k = 0; k < f->n_occ; k++)
    {
      gboolean miss;
      int to = atom_move (net, f->occ[k], i, -1, &miss);
      if (miss && to >= 0)
        {
          GROW (net->dirty_classes, net->cap_dirty_classes, net->n_dirty_classes + 1, ClassRef);
          net->dirty_classes[net->n_dirty_classes++] = (ClassRef) { to, net->class_gen[to] };
        }
    }
  f->n_ent = 0;
  f->n_occ = 0;
}

/* Removes finished flow i from its links: each counts the flow's whole size and moves to its new
 * class, which the next recompute re-solves. */
static void
detach (SimFlowNet *net, guint32 i)
{
  Flow *f = &net->flows[i];
  for (int k = 0; k < f->n_occ; k++)
    net->atoms[f->occ[k]].bytes += f->bytes;
  unlink_flow (net, i);
  schedule_recompute (net);
}

static void
complete_cb (SimEngine *engine, gpointer data, guint64 arg)
{
  SimFlowNet *net = data;
  guint32 i = (guint32) arg;
  Flow *f = &net->flows[i];
  gint64 now = sim_engine_now (engine);
  f->event = 0;
  if (f->n_occ > 0)  /* it has links and bytes: it holds atoms */
    {
      double remaining = f->remaining - f->rate * elapsed_s (f->updated_ns, now);
      if (remaining > FINISH_REL * f->bytes)
        {
          /* Rounding put the event a hair early: re-plan from here (at least 1 ns later). */
          f->remaining = remaining;
          f->updated_ns = now;
          plan_completion (net, f, i);
          return;
        }
      detach (net, i);
    }
  SimFlowDoneFn done = f->done;
  SimFlowDoneManyFn done_many = f->done_many;
  gpointer user = f->user;
  guint64 done_arg = f->arg;
  int n = f->bundle ? f->bundle->n_members : 1;
  MemberCb *cbs = NULL;
  if (f->has_cbs)
    {
      /* the slot may take a new flow inside a callback: its callbacks trade buffers with the net's */
      cbs = f->cbs;
      int cap = f->cap_cbs;
      f->cbs = net->cb_scratch;
      f->cap_cbs = net->cap_cb_scratch;
      net->cb_scratch = cbs;
      net->cap_cb_scratch = cap;
      f->has_cbs = FALSE;
    }
  f->gen = f->gen == G_MAXUINT32 ? 1 : f->gen + 1;
  f->next = net->free_flow;
  net->free_flow = i;
  net->active -= n;
  if (done_many)
    done_many (user, done_arg, n);
  for (int m = 0; m < n && done; m++)
    done (user, done_arg);
  for (int m = 0; cbs && m < n; m++)
    if (cbs[m].done)
      cbs[m].done (cbs[m].user, cbs[m].arg);
}

static inline void
visit_class (SimFlowNet *net, int id, guint32 epoch, int *n)
{
  Class *c = net->classes[id];
  if (c->mark == epoch)
    return;
  c->mark = epoch;
  GROW (net->comp_classes, net->cap_comp_classes, *n + 1, int);
  c->local = *n;
  net->comp_classes[(*n)++] = id;
}

/* Lists bundle fi for the check that ends this recompute (once). */
static inline void
check_add (SimFlowNet *net, guint32 fi)
{
  Flow *f = &net->flows[fi];
  if (f->bundle == NULL || f->cmark == net->check_stamp)
    return;
  f->cmark = net->check_stamp;
  GROW (net->check, net->cap_check, net->n_check + 1, guint32);
  net->check[net->n_check++] = fi;
}

static inline void
visit_flow (SimFlowNet *net, guint32 fi, guint32 epoch, guint32 *n)
{
  Hot *h = &net->hot[fi];
  if (h->mark == epoch)
    return;
  h->mark = epoch;
  GROW (net->comp_flows, net->cap_comp_flows, *n + 1, guint32);
  net->comp_flows[(*n)++] = fi;
  check_add (net, fi);
}

static guint32
next_epoch (SimFlowNet *net)
{
  if (++net->epoch == 0)
    {
      /* epoch wrapped: clear marks so old ones cannot collide */
      for (int c = 0; c < net->n_classes; c++)
        net->classes[c]->mark = net->classes[c]->smark = 0;
      for (guint32 i = 0; i < net->n_flows; i++)
        net->hot[i].mark = net->hot[i].vmark = net->flows[i].xmark = 0;
      net->epoch = 1;
    }
  return net->epoch;
}

/* Drops f's stale entries. */
static void
compact_entries (SimFlowNet *net, Flow *f)
{
  int kept = 0;
  for (int e = 0; e < f->n_ent; e++)
    {
      if (net->class_gen[f->ent[e].cls] == f->ent[e].gen)
        f->ent[kept++] = f->ent[e];
    }
  f->n_ent = kept;
}

/* Drops f's stale entries, then visits its classes (into comp_classes, counting *n_classes);
 * returns the link occurrences f adds to the rows (its entries' multiplicities). */
static int
visit_flow_classes (SimFlowNet *net, Flow *f, guint32 epoch, int *n_classes)
{
  compact_entries (net, f);
  int occ = 0;
  for (int e = 0; e < f->n_ent; e++)
    {
      occ += f->ent[e].mult;
      visit_class (net, f->ent[e].cls, epoch, n_classes);
    }
  return occ;
}

/* Compressed rows of the flows comp_flows[0..n_flows) over the classes comp_classes[0..n_classes)
 * (their local indices set, capacities in net->capacity), then the solve into net->rates.
 *
 * Classes that cannot fill are left out: no flow gets more than its tightest class allows alone
 * (bound = min over its classes of capacity / crossings), so a class whose flows' bounds, times
 * their crossings, add up to less than its capacity never fills, and the solver would only drain
 * it (it pops a class only when that class fills). A ring crossing hundreds of classes, each
 * shared with another rank's send, keeps the few that can bind. Margin: kept unless short of its
 * capacity by more than PRUNE_REL, far above rounding. */
#define PRUNE_REL 1e-9

static void
solve_rows (SimFlowNet *net, guint32 n_flows, int n_classes, int n_occ)
{
  GROW (net->start, net->cap_start, (int) n_flows + 1, int);
  GROW (net->rates, net->cap_rates, (int) n_flows + 1, double);
  GROW (net->weights, net->cap_weights, (int) n_flows + 1, double);
  GROW (net->path, net->cap_path, n_occ, guint32);
  GROW (net->bound, net->cap_bound, (int) n_flows + 1, double);
  GROW (net->load_bound, net->cap_load_bound, n_classes, double);
  GROW (net->remap, net->cap_remap, n_classes, int);
  for (int q = 0; q < n_classes; q++)
    net->load_bound[q] = 0;
  for (guint32 q = 0; q < n_flows; q++)
    {
      const Flow *f = &net->flows[net->comp_flows[q]];
      double b = INFINITY;
      for (int e = 0; e < f->n_ent; e++)
        {
          int local = net->classes[f->ent[e].cls]->local;
          if (local >= 0)
            b = MIN (b, net->capacity[local] / f->ent[e].mult);
        }
      net->bound[q] = b;
      for (int e = 0; e < f->n_ent; e++)
        {
          int local = net->classes[f->ent[e].cls]->local;
          if (local >= 0)
            net->load_bound[local] += f->ent[e].mult * b;
        }
    }
  int n_kept = 0;
  for (int q = 0; q < n_classes; q++)
    if (net->load_bound[q] >= net->capacity[q] * (1 - PRUNE_REL))
      {
        net->capacity[n_kept] = net->capacity[q];  /* n_kept <= q: compacts in place */
        net->remap[q] = n_kept++;
      }
    else
      net->remap[q] = -1;
  int o = 0;
  for (guint32 q = 0; q < n_flows; q++)
    {
      const Flow *f = &net->flows[net->comp_flows[q]];
      net->weights[q] = net->hot[net->comp_flows[q]].w;
      net->start[q] = o;
      for (int e = 0; e < f->n_ent; e++)
        {
          int local = net->classes[f->ent[e].cls]->local;
          if (local < 0 || (local = net->remap[local]) < 0)
            continue;
          for (int m = 0; m < f->ent[e].mult; m++)
            net->path[o++] = (guint32) local;
        }
    }
  net->start[n_flows] = o;
  if (n_flows > 0)
    sim_maxmin_solve (net->solver, n_kept, net->capacity, (int) n_flows, net->start, net->path,
                      net->weights, net->rates);
}

/* New rates net->rates[0..n) of comp_flows[0..n): snapshots and completions of those that changed. */
static void
apply_rates (SimFlowNet *net, guint32 n, gint64 now)
{
  for (guint32 q = 0; q < n; q++)
    {
      guint32 fi = net->comp_flows[q];
      Flow *f = &net->flows[fi];
      double rate = net->rates[q];
      if (rate == f->rate)
        continue;  /* same rate: snapshot and completion event stay valid */
      f->remaining -= f->rate * elapsed_s (f->updated_ns, now);
      f->updated_ns = now;
      f->rate = net->hot[fi].rate = rate;
      if (f->event)
        net->stats.reschedules++;
      plan_completion (net, f, fi);
    }
}

/* ---- local re-solve ------------------------------------------------------------------------------
 * Most recomputes change nothing but the seeds: a flow ends and its neighbours keep bottlenecks
 * elsewhere, or new flows fit in the headroom left. So the seeds D (new flows, the flows of the
 * classes a finished flow left) are solved first on their own, every other flow's rate held, on
 * each of their classes' capacity less the others' load. The result, with the others' rates, is
 * the max-min allocation of the whole component exactly when every flow of D and every flow
 * sharing a class with D still has a bottleneck (a full class on which no flow gets more than it):
 * that characterises the max-min allocation, which is unique, and flows further away keep theirs
 * since neither their classes nor their loads changed. When the check fails the component is
 * re-solved whole. "Full" and "no more" are judged to LOCAL_TOL relative, far below the solver's
 * own rounding of levels (SNAP_REL in maxmin.c applies at 1e-12 per level, compounded); a seed's
 * new rate within LOCAL_TOL of its old one keeps the old one bit for bit, so flows that did not
 * change keep their completion events and identical flows stay identical. */
#define LOCAL_TOL 1e-11
/* Tries of a growing seed set before the whole component is solved. */
#define LOCAL_ROUNDS 8

static inline double
trial_rate (const SimFlowNet *net, guint32 fi, guint32 epoch)
{
  const Hot *h = &net->hot[fi];
  return h->mark == epoch ? net->rates[h->local] : h->rate;
}

/* Load and largest rate per unit weight of class id under the trial rates; FALSE if over capacity. */
static gboolean
class_stats (SimFlowNet *net, int id, guint32 epoch)
{
  Class *c = net->classes[id];
  if (c->smark == epoch)
    return TRUE;
  c->smark = epoch;
  double load = 0, mx = 0;
  for (int m = 0; m < c->n_flows; m++)
    {
      double r = trial_rate (net, c->members[m].flow, epoch);
      load += c->members[m].mult * r;
      mx = MAX (mx, r / net->hot[c->members[m].flow].w);
    }
  c->load = load;
  c->max_rate = mx;
  return load <= c->capacity * (1 + LOCAL_TOL);
}

static inline gboolean
is_bottleneck (const Class *c, double r)
{
  return c->load >= c->capacity * (1 - LOCAL_TOL) && r >= c->max_rate * (1 - LOCAL_TOL);
}

/* Whether f has a bottleneck under the trial rates (its last one first: a flow with hundreds of
 * classes, a ring's, usually keeps it). Classes over capacity clear *feasible. */
static gboolean
has_bottleneck (SimFlowNet *net, guint32 fi, guint32 epoch, gboolean *feasible)
{
  Flow *f = &net->flows[fi];
  double r = trial_rate (net, fi, epoch) / net->hot[fi].w;
  if (f->hint.cls >= 0 && net->class_gen[f->hint.cls] == f->hint.gen)
    {
      if (!class_stats (net, f->hint.cls, epoch))
        *feasible = FALSE;
      if (is_bottleneck (net->classes[f->hint.cls], r))
        return TRUE;
    }
  compact_entries (net, f);
  for (int e = 0; e < f->n_ent; e++)
    {
      int id = f->ent[e].cls;
      if (!class_stats (net, id, epoch))
        *feasible = FALSE;
      if (is_bottleneck (net->classes[id], r))
        {
          f->hint = (ClassRef) { id, f->ent[e].gen };
          return TRUE;
        }
    }
  return FALSE;
}

/* Adds g to the seeds of the next try (after comp_flows[0..*n_next)). */
static void
add_seed (SimFlowNet *net, guint32 gi, guint32 epoch, guint32 *n_next)
{
  Flow *g = &net->flows[gi];
  if (net->hot[gi].mark == epoch || g->xmark == epoch)
    return;
  g->xmark = epoch;
  GROW (net->comp_flows, net->cap_comp_flows, *n_next + 1, guint32);
  net->comp_flows[(*n_next)++] = gi;
}

/* Solves seeds comp_flows[0..n) alone and keeps the result if it passes the check above. Else
 * appends to comp_flows the flows whose rates must change too, as far as the check shows: flows
 * left without a bottleneck, and for a seed left without one, the others on its full classes that
 * get more than it; *n_next is the new count (n if none were found or a class is over capacity). */
static gboolean
try_local (SimFlowNet *net, guint32 n, gint64 now, guint32 *n_next)
{
  *n_next = n;
  guint32 epoch = next_epoch (net);
  for (guint32 q = 0; q < n; q++)
    {
      Hot *h = &net->hot[net->comp_flows[q]];
      h->mark = epoch;
      h->local = (int) q;
    }
  int n_classes = 0, n_occ = 0;
  for (guint32 q = 0; q < n; q++)
    n_occ += visit_flow_classes (net, &net->flows[net->comp_flows[q]], epoch, &n_classes);
  /* Capacities less the other flows' load. Classes left with the same capacity and the same seeds
   * (a ring's hops, each shared with another rank's transfer at the same rate) are twins in this
   * solve: the first pops and the others drain, so only the first is solved (local -1 for the
   * others, which solve_rows skips). */
  GROW (net->capacity, net->cap_capacity, n_classes, double);
  int n_twin = 1;
  while (n_twin < 2 * n_classes)
    n_twin *= 2;
  GROW (net->twin_table, net->cap_twin, n_twin, int);
  GROW (net->twin_key, net->cap_twin_key, 3 * n_classes, guint64);
  memset (net->twin_table, 0xff, (gsize) n_twin * sizeof (int));
  int n_solve = 0;
  for (int q = 0; q < n_classes; q++)
    {
      Class *c = net->classes[net->comp_classes[q]];
      double used = 0;
      guint64 d1 = 0, d2 = 0;
      for (int m = 0; m < c->n_flows; m++)
        {
          guint32 gi = c->members[m].flow;
          const Hot *g = &net->hot[gi];
          guint64 mult = (guint64) c->members[m].mult;
          if (g->mark != epoch)
            used += c->members[m].mult * g->rate;
          else
            {
              d1 += mult * flow_mix (gi);
              d2 += mult * flow_mix2 (gi);
            }
        }
      double cap = MAX (c->capacity - used, 0.0);
      guint64 cap_bits;
      memcpy (&cap_bits, &cap, sizeof cap_bits);
      guint64 *key = net->twin_key + 3 * n_solve;
      key[0] = d1;
      key[1] = d2;
      key[2] = cap_bits;
      guint64 h = flow_mix (d1 ^ (d2 * 0x9E3779B97F4A7C15ull) ^ cap_bits);
      int slot = (int) (h & (guint64) (n_twin - 1));
      c->local = -1;
      for (;; slot = (slot + 1) & (n_twin - 1))
        {
          int other = net->twin_table[slot];
          if (other < 0)
            {
              net->twin_table[slot] = n_solve;
              net->capacity[n_solve] = cap;
              c->local = n_solve++;
              break;
            }
          const guint64 *ok = net->twin_key + 3 * other;
          if (ok[0] == d1 && ok[1] == d2 && ok[2] == cap_bits)
            break;  /* a twin of an earlier class */
        }
    }
  solve_rows (net, n, n_solve, n_occ);
  for (guint32 q = 0; q < n; q++)
    {
      const Flow *f = &net->flows[net->comp_flows[q]];
      if (fabs (net->rates[q] - f->rate) <= LOCAL_TOL * f->rate)
        net->rates[q] = f->rate;
    }
  /* The check: the seeds, then the other flows of their classes. */
  gboolean feasible = TRUE, ok = TRUE;
  for (guint32 q = 0; q < n; q++)
    {
      guint32 fi = net->comp_flows[q];
      const Flow *f = &net->flows[fi];
      net->hot[fi].vmark = epoch;
      if (has_bottleneck (net, fi, epoch, &feasible))
        continue;
      ok = FALSE;
      double r = net->rates[q] / net->hot[fi].w;
      for (int e = 0; e < f->n_ent; e++)
        {
          const Class *c = net->classes[f->ent[e].cls];
          if (c->load < c->capacity * (1 - LOCAL_TOL))
            continue;
          for (int m = 0; m < c->n_flows; m++)
            {
              const Hot *g = &net->hot[c->members[m].flow];
              if (g->mark != epoch && g->rate / g->w > r)
                add_seed (net, c->members[m].flow, epoch, n_next);
            }
        }
    }
  for (int q = 0; q < n_classes && feasible; q++)
    {
      const Class *c = net->classes[net->comp_classes[q]];
      for (int m = 0; m < c->n_flows; m++)
        {
          guint32 gi = c->members[m].flow;
          if (net->hot[gi].vmark == epoch)
            continue;
          net->hot[gi].vmark = epoch;
          check_add (net, gi);
          if (!has_bottleneck (net, gi, epoch, &feasible))
            {
              ok = FALSE;
              add_seed (net, c->members[m].flow, epoch, n_next);
            }
        }
    }
  if (!feasible)
    *n_next = n;
  if (!ok || !feasible)
    return FALSE;
  apply_rates (net, n, now);
  net->stats.flows_resolved += n;
  return TRUE;
}

/* Flows only ended: their neighbours comp_flows[0..n) are the only flows that could get more. If
 * each still has a bottleneck at the current rates (usually its last one, found in O(1)), every
 * flow has one and the current rates, less the ended flows', are the max-min allocation: nothing
 * to re-solve (a local solve would return these rates up to LOCAL_TOL, and keep them). */
static gboolean
unchanged_after_ends (SimFlowNet *net, guint32 n)
{
  guint32 epoch = next_epoch (net);  /* no flow marked: trial rates are the current ones */
  gboolean feasible = TRUE;
  for (guint32 q = 0; q < n; q++)
    if (!has_bottleneck (net, net->comp_flows[q], epoch, &feasible) || !feasible)
      return FALSE;
  return TRUE;
}

/* Re-solves the components reachable from the seeds (new flows, classes that lost a flow) and
 * re-plans changed completions: locally if that is exact (above), else component by component. */
static void
solve_changes (SimFlowNet *net)
{
  gint64 now = sim_engine_now (net->engine);
  guint32 epoch = next_epoch (net);
  net->stats.recomputes++;

  /* The seeds as flows: the new ones and the members of the classes that lost one. */
  guint32 n_seeds = 0;
  for (int d = 0; d < net->n_dirty_flows; d++)
    {
      guint32 fi = net->dirty_flows[d];
      if (net->flows[fi].next == FLOW_LIVE)
        visit_flow (net, fi, epoch, &n_seeds);
    }
  gboolean only_ends = n_seeds == 0;
  net->n_dirty_flows = 0;
  for (int d = 0; d < net->n_dirty_classes; d++)
    {
      ClassRef ref = net->dirty_classes[d];
      const Class *c = net->classes[ref.cls];
      if (net->class_gen[ref.cls] == ref.gen)
        for (int m = 0; m < c->n_flows; m++)
          visit_flow (net, c->members[m].flow, epoch, &n_seeds);
    }
  net->n_dirty_classes = 0;
  if (only_ends && n_seeds > 0 && unchanged_after_ends (net, n_seeds))
    return;
  for (int round = 0; round < LOCAL_ROUNDS && n_seeds > 0; round++)
    {
      guint32 n_next;
      if (try_local (net, n_seeds, now, &n_next))
        return;
      if (n_next == n_seeds)
        break;
      n_seeds = n_next;
    }
  if (n_seeds == 0)
    return;

  /* Breadth-first search over flow -> class -> flow from the seeds, still first in comp_flows. */
  epoch = next_epoch (net);
  for (guint32 q = 0; q < n_seeds; q++)
    net->hot[net->comp_flows[q]].mark = epoch;
  int n_comp_classes = 0;
  guint32 n_comp_flows = n_seeds;
  int n_occ = 0;
  int qc = 0;
  guint32 qf = 0;
  while (qc < n_comp_classes || qf < n_comp_flows)
    {
      for (; qc < n_comp_classes; qc++)
        {
          const Class *c = net->classes[net->comp_classes[qc]];
          for (int m = 0; m < c->n_flows; m++)
            visit_flow (net, c->members[m].flow, epoch, &n_comp_flows);
        }
      for (; qf < n_comp_flows; qf++)
        n_occ += visit_flow_classes (net, &net->flows[net->comp_flows[qf]], epoch, &n_comp_classes);
    }

  /* One link per class, listed mult times per flow. */
  GROW (net->capacity, net->cap_capacity, n_comp_classes, double);
  for (int q = 0; q < n_comp_classes; q++)
    net->capacity[q] = net->classes[net->comp_classes[q]]->capacity;
  solve_rows (net, n_comp_flows, n_comp_classes, n_occ);
  net->stats.flows_resolved += n_comp_flows;
  apply_rates (net, n_comp_flows, now);
}

/* ---- bundles ----------------------------------------------------------------------------------
 * A bundle is n flows of the same size and weight started together (a representative's sibling
 * pairs, a collective's rings in every domain), run as one flow over their paths concatenated: a
 * link crossed by k of them counts k crossings, as k flows would. Its members keep one rate, and
 * that is exact while each of them has a bottleneck of its own: a full class on one of its links
 * on which no flow gets more (per unit of weight) than the bundle. Then the bundle's allocation,
 * given to every member, is feasible and every flow of the split system has a bottleneck, which
 * characterises the max-min allocation (unique). So after every recompute each bundle it touched
 * (the seeds, their classes' flows, a solved component) is checked member by member; members
 * without a bottleneck of their own would go faster alone, and move to a new bundle (their own
 * further splits follow at the next recompute, at the same nanosecond). A member never moved
 * had its bundle's rate all along, so both parts keep the same remaining bytes. Checked at
 * LOCAL_TOL, like the local re-solve. */

/* Bundle i keeps members msplit[0..n_keep) and msplit[n_keep..n) start as a new bundle with the
 * same remaining bytes; both are seeds of the next recompute. */
static void
split_bundle (SimFlowNet *net, guint32 i, int n_keep, int n)
{
  gint64 now = sim_engine_now (net->engine);
  Flow *f = &net->flows[i];
  f->remaining -= f->rate * elapsed_s (f->updated_ns, now);
  f->updated_ns = now;
  double remaining = f->remaining;
  guint32 j = start_members (net, net->msplit + n_keep, n - n_keep, f->bytes, net->hot[i].w, f->done, f->done_many,
                             f->user, f->arg);
  net->flows[j].remaining = remaining;
  if (net->flows[i].has_cbs)
    {
      /* each part keeps its members' callbacks, in the order of its members */
      GROW (net->cb_scratch, net->cap_cb_scratch, n, MemberCb);
      Flow *fi = &net->flows[i], *fj = &net->flows[j];
      memcpy (net->cb_scratch, fi->cbs, sizeof (MemberCb) * (gsize) n);
      GROW (fj->cbs, fj->cap_cbs, n - n_keep, MemberCb);
      for (int m = n_keep; m < n; m++)
        fj->cbs[m - n_keep] = net->cb_scratch[net->midx[m]];
      fj->has_cbs = TRUE;
      for (int m = 0; m < n_keep; m++)
        fi->cbs[m] = net->cb_scratch[net->midx[m]];
    }
  if (net->n_sens > 0)
    {
      int ns = net->n_sens;
      double *dj = flow_sens (net, j);
      memcpy (dj, flow_sens (net, i), sizeof (double) * ns);
    }
  net->active -= n - n_keep;
  unlink_flow (net, i);
  SimFlowPath *p = n_keep == 1 ? net->msplit[0] : bundle_path (net, net->msplit, n_keep);
  path_derive (net, p);
  f = &net->flows[i];  /* flows[] may have moved */
  f->bundle = n_keep == 1 ? NULL : p;
  f->hint = (ClassRef) { -1, 0 };
  link_flow (net, i, p->occ, p->n_occ);
  net->stats.bundle_splits++;
}

static inline gboolean
link_binds (SimFlowNet *net, guint32 link, double r, guint32 epoch)
{
  int cls = net->atoms[net->atom_of[link]].cls;
  if (cls < 0)
    return FALSE;
  class_stats (net, cls, epoch);
  return is_bottleneck (net->classes[cls], r);
}

/* A fresh stamp for the per-link memo (lmark), clearing it when the stamps wrap. */
static void
next_lstamp (SimFlowNet *net)
{
  if (++net->lstamp == 0)
    {
      memset (net->lmark, 0, sizeof (guint32) * (gsize) MAX (net->n_links, 1));
      net->lstamp = 1;
    }
}

/* link_binds, remembered per link for the bundle being checked: an all-to-all's members share
 * their NICs' links (a 16,384-GPU DeepSeek-V3 step spent 62% of its time in this check, a few
 * dependent cache misses per member of bundles of tens of thousands). */
static inline gboolean
link_binds_memo (SimFlowNet *net, guint32 link, double r, guint32 epoch)
{
  if (net->lmark[link] != net->lstamp)
    {
      net->lmark[link] = net->lstamp;
      net->lbinds[link] = (guint8) link_binds (net, link, r, epoch);
    }
  return net->lbinds[link];
}

/* Whether member path p has a bottleneck of its own at per-weight rate r (class stats of epoch);
 * *hint: the link that bound it last, tried first without reading p (a ring's hundreds of links
 * are rarely walked). */
static gboolean
member_bound (SimFlowNet *net, const SimFlowPath *p, double r, guint32 epoch, guint32 *hint)
{
  if (link_binds_memo (net, *hint, r, epoch))
    return TRUE;
  for (int k = 0; k < p->n_links; k++)
    if (link_binds_memo (net, p->links[k], r, epoch))
      {
        *hint = p->links[k];
        return TRUE;
      }
  return FALSE;
}

/* Whether every member of b is bound by its hint, tried once per distinct hint: then the
 * member-by-member check finds the same and moves no hint. */
static gboolean
hints_all_bind (SimFlowNet *net, const SimFlowPath *b, double r, guint32 epoch)
{
  if (b->n_hints < 0)
    return FALSE;
  for (int k = 0; k < b->n_hints; k++)
    if (!link_binds_memo (net, b->hints[k], r, epoch))
      return FALSE;
  return TRUE;
}

/* b->hints from its members' hints (after a member-by-member check, which may have moved them);
 * the stamp it takes ends the check's link memo. */
static void
hints_collect (SimFlowNet *net, SimFlowPath *b)
{
  next_lstamp (net);
  if (b->hints == NULL)
    b->hints = g_new (guint32, b->n_members);
  b->n_hints = 0;
  for (int m = 0; m < b->n_members; m++)
    {
      guint32 l = b->member_hint[m];
      if (net->lmark[l] != net->lstamp)
        {
          net->lmark[l] = net->lstamp;
          b->hints[b->n_hints++] = l;
        }
    }
}

static void
check_bundles (SimFlowNet *net)
{
  guint32 epoch = next_epoch (net);  /* no flow marked: the current rates */
  if (net->lmark == NULL)
    {
      net->lmark = g_new0 (guint32, MAX (net->n_links, 1));
      net->lbinds = g_new0 (guint8, MAX (net->n_links, 1));
    }
  for (int q = 0; q < net->n_check; q++)
    {
      guint32 i = net->check[q];
      Flow *f = &net->flows[i];
      if (f->next != FLOW_LIVE || f->bundle == NULL || f->rate <= 0 || isinf (f->rate))
        continue;
      next_lstamp (net);
      SimFlowPath *b = f->bundle;
      double r = f->rate / net->hot[i].w;
      int n = b->n_members;
      if (hints_all_bind (net, b, r, epoch))
        continue;
      GROW (net->msplit, net->cap_msplit, 2 * n, SimFlowPath *);
      GROW (net->midx, net->cap_midx, 2 * n, int);
      SimFlowPath **others = net->msplit + n;
      int *oidx = net->midx + n;
      int n_keep = 0, n_other = 0;
      for (int m = 0; m < n; m++)
        if (member_bound (net, b->members[m], r, epoch, &b->member_hint[m]))
          {
            net->midx[n_keep] = m;
            net->msplit[n_keep++] = b->members[m];
          }
        else
          {
            oidx[n_other] = m;
            others[n_other++] = b->members[m];
          }
      hints_collect (net, b);
      if (n_other == 0 || n_keep == 0)
        continue;  /* all bound; none (only by rounding past LOCAL_TOL): left as is */
      memmove (net->msplit + n_keep, others, (gsize) n_other * sizeof *others);
      memmove (net->midx + n_keep, oidx, (gsize) n_other * sizeof *oidx);
      split_bundle (net, i, n_keep, n);
      epoch = next_epoch (net);  /* classes moved */
    }
  net->n_check = 0;
}

static void flush_batched (SimFlowNet *net);

static void
recompute (SimFlowNet *net)
{
  flush_batched (net);
  if (++net->check_stamp == 0)
    {
      for (guint32 i = 0; i < net->n_flows; i++)
        net->flows[i].cmark = 0;
      net->check_stamp = 1;
    }
  net->n_check = 0;
  solve_changes (net);
  if (net->n_check > 0)
    check_bundles (net);
}

static void
recompute_cb (SimEngine *engine, gpointer data, guint64 arg)
{
  SimFlowNet *net = data;
  net->recompute_event = 0;
  recompute (net);
}

void
sim_flow_net_flush (SimFlowNet *net)
{
  g_return_if_fail (net != NULL);
  if (net->recompute_event == 0)
    return;
  sim_engine_cancel (net->engine, net->recompute_event);
  net->recompute_event = 0;
  recompute (net);
}
