/*
 * broker/alarmnode.c: conditions as nodes, and the evaluator (alarmnode.h).
 *
 * One table (bk_an_fields) says what a condition is made of: each field's
 * browse path (the event field path and the node's place), its parent
 * field, node class, reference from the parent, TypeDefinition and
 * DataType, which alarms have it, whether events carry it, and which
 * changes (BK_ALARM_CH_*) rewrite its slot.  The build, the event and the
 * slot writes all walk that table, so a node and its event field cannot
 * disagree: a slot is written with the very bytes of the event's field.
 *
 * A NodeSet's alarm instance (broker/alarmnset.h) is built from the same
 * table: its Object is the condition, a field the file has is the file's
 * node (found by BrowseName under its parent), the others are added.
 *
 * Invariants: an alarm's slot[f] is SHM_NONE exactly when it has no
 * variable f of its own to write (an instance's NormalState target is
 * the file's); an input slot's bit is set in an->watch exactly when some
 * alarm watches it, and the hash finds its first alarm (the others follow
 * by next).  The watcher runs inside a value batch, on the broker's
 * thread; it writes only condition slots (never watched) and events.
 * Nothing is allocated after bk_alarmnode_add.
 */
#include "alarmnode.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "event.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/log.h"

#define BK_AN_PREFIX   "Alarms."
#define BK_AN_ID_MAX   192      /* bytes of a condition variable's NodeId */
#define BK_AN_REC_CAP  8192     /* one event record */
#define BK_AN_VAR_CAP  1024     /* one field's Variant outside a record */
#define BK_AN_COMMENT_MAX 256
#define BK_AN_USER_MAX 64
#define BK_AN_SCRATCH  (16 * 1024) /* a call's decoded arguments */
#define BK_AN_NMETH    8        /* methods of a condition */

/* struct bk_an_field.flags */
#define BK_AN_EVENT 0x01        /* an event field */
#define BK_AN_OBJ   0x02        /* an Object (no value, no slot) */
#define BK_AN_PROP  0x04        /* HasProperty from its parent */
#define BK_AN_EVERY 0xFFFFu     /* rewritten at every event */

/* Which alarms have a field. */
enum bk_an_need {
    BK_AN_ALL = 0, BK_AN_CONFIRM, BK_AN_EXCL, BK_AN_LIM_HH, BK_AN_LIM_H,
    BK_AN_LIM_L, BK_AN_LIM_LL, BK_AN_ST_HH, BK_AN_ST_H, BK_AN_ST_L,
    BK_AN_ST_LL, BK_AN_OFFNORMAL
};

/* The fields, in table order (a parent before its children). */
enum bk_an_f {
    F_EVENTID, F_EVENTTYPE, F_SOURCENODE, F_SOURCENAME, F_TIME,
    F_RECEIVETIME, F_MESSAGE, F_SEVERITY,
    F_CLASSID, F_CLASSNAME, F_CONDNAME, F_BRANCHID, F_RETAIN,
    F_CLIENTUSERID,
    F_ENABLED, F_ENABLED_ID, F_ENABLED_TT, F_ENABLED_T, F_ENABLED_F,
    F_QUALITY, F_QUALITY_TS, F_LASTSEV, F_LASTSEV_TS, F_COMMENT,
    F_COMMENT_TS,
    F_ACKED, F_ACKED_ID, F_ACKED_TT, F_ACKED_T, F_ACKED_F,
    F_CONFIRMED, F_CONFIRMED_ID, F_CONFIRMED_TT, F_CONFIRMED_T,
    F_CONFIRMED_F,
    F_ACTIVE, F_ACTIVE_ID, F_ACTIVE_TT, F_ACTIVE_T, F_ACTIVE_F,
    F_INPUTNODE, F_SUPPRESSED, F_MAXSHELVED,
    F_SHELVING, F_SHELV_CUR, F_SHELV_CUR_ID, F_SHELV_UNSHELVE,
    F_LIMIT, F_LIMIT_CUR, F_LIMIT_CUR_ID,
    F_HHLIMIT, F_HLIMIT, F_LLIMIT, F_LLLIMIT,
    F_HH, F_HH_ID, F_HH_TT, F_HH_T, F_HH_F,
    F_H, F_H_ID, F_H_TT, F_H_T, F_H_F,
    F_L, F_L_ID, F_L_TT, F_L_T, F_L_F,
    F_LL, F_LL_ID, F_LL_TT, F_LL_T, F_LL_F,
    F_NORMALSTATE, F_NORMALVALUE,
    BK_AN_NF
};

struct bk_an_field {
    const char *path;           /* "0:ActiveState/0:Id" */
    int8_t      parent;         /* a field, -1: the condition */
    uint8_t     flags;          /* BK_AN_EVENT, BK_AN_OBJ, BK_AN_PROP */
    uint8_t     need;           /* enum bk_an_need */
    uint16_t    ch;             /* BK_ALARM_CH_* that rewrite the slot */
    uint32_t    type_def;       /* ns=0 ids */
    uint32_t    data_type;
};

#define EV  BK_AN_EVENT
#define PR  BK_AN_PROP
#define PT  UA_NS0ID_PROPERTYTYPE
#define TS  UA_NS0ID_TWOSTATEVARIABLETYPE
#define CV  UA_NS0ID_CONDITIONVARIABLETYPE
#define LT  UA_NS0ID_LOCALIZEDTEXT
#define DTM UA_NS0ID_UTCTIME
/* A TwoStateVariable and its Id, TransitionTime, TrueState, FalseState. */
#define BK_AN_TWO(F, name, need, chb)                                      \
    [F] = { "0:" name, -1, EV, need, chb, TS, LT },                        \
    [F##_ID] = { "0:" name "/0:Id", F, EV | PR, need, chb, PT,             \
                 UA_NS0ID_BOOLEAN },                                       \
    [F##_TT] = { "0:" name "/0:TransitionTime", F, EV | PR, need, chb, PT, \
                 DTM },                                                    \
    [F##_T] = { "0:" name "/0:TrueState", F, PR, need, 0, PT, LT },        \
    [F##_F] = { "0:" name "/0:FalseState", F, PR, need, 0, PT, LT }

static const struct bk_an_field bk_an_fields[BK_AN_NF] = {
    [F_EVENTID] = { "0:EventId", -1, EV | PR, 0, BK_AN_EVERY, PT,
                    UA_NS0ID_BYTESTRING },
    [F_EVENTTYPE] = { "0:EventType", -1, EV | PR, 0, 0, PT,
                      UA_NS0ID_NODEID },
    [F_SOURCENODE] = { "0:SourceNode", -1, EV | PR, 0, 0, PT,
                       UA_NS0ID_NODEID },
    [F_SOURCENAME] = { "0:SourceName", -1, EV | PR, 0, 0, PT,
                       UA_NS0ID_STRING },
    [F_TIME] = { "0:Time", -1, EV | PR, 0, BK_AN_EVERY, PT, DTM },
    [F_RECEIVETIME] = { "0:ReceiveTime", -1, EV | PR, 0, BK_AN_EVERY, PT,
                        DTM },
    [F_MESSAGE] = { "0:Message", -1, EV | PR, 0, BK_AN_EVERY, PT, LT },
    [F_SEVERITY] = { "0:Severity", -1, EV | PR, 0, BK_AN_EVERY, PT,
                     UA_NS0ID_UINT16 },
    [F_CLASSID] = { "0:ConditionClassId", -1, EV | PR, 0, 0, PT,
                    UA_NS0ID_NODEID },
    [F_CLASSNAME] = { "0:ConditionClassName", -1, EV | PR, 0, 0, PT, LT },
    [F_CONDNAME] = { "0:ConditionName", -1, EV | PR, 0, 0, PT,
                     UA_NS0ID_STRING },
    [F_BRANCHID] = { "0:BranchId", -1, EV | PR, 0, 0, PT, UA_NS0ID_NODEID },
    [F_RETAIN] = { "0:Retain", -1, EV | PR, 0, BK_AN_EVERY, PT,
                   UA_NS0ID_BOOLEAN },
    [F_CLIENTUSERID] = { "0:ClientUserId", -1, EV | PR, 0,
                         BK_ALARM_CH_ACKED | BK_ALARM_CH_CONFIRM
                             | BK_ALARM_CH_COMMENT | BK_ALARM_CH_ENABLED
                             | BK_ALARM_CH_SHELVING,
                         PT, UA_NS0ID_STRING },
    BK_AN_TWO(F_ENABLED, "EnabledState", 0, BK_ALARM_CH_ENABLED),
    [F_QUALITY] = { "0:Quality", -1, EV, 0, 0, CV, UA_NS0ID_STATUSCODE },
    [F_QUALITY_TS] = { "0:Quality/0:SourceTimestamp", F_QUALITY, EV | PR, 0,
                       0, PT, DTM },
    [F_LASTSEV] = { "0:LastSeverity", -1, EV, 0, BK_ALARM_CH_SEVERITY, CV,
                    UA_NS0ID_UINT16 },
    [F_LASTSEV_TS] = { "0:LastSeverity/0:SourceTimestamp", F_LASTSEV,
                       EV | PR, 0, BK_ALARM_CH_SEVERITY, PT, DTM },
    [F_COMMENT] = { "0:Comment", -1, EV, 0, BK_ALARM_CH_COMMENT, CV, LT },
    [F_COMMENT_TS] = { "0:Comment/0:SourceTimestamp", F_COMMENT, EV | PR, 0,
                       BK_ALARM_CH_COMMENT, PT, DTM },
    BK_AN_TWO(F_ACKED, "AckedState", 0, BK_ALARM_CH_ACKED),
    BK_AN_TWO(F_CONFIRMED, "ConfirmedState", BK_AN_CONFIRM,
              BK_ALARM_CH_CONFIRM),
    BK_AN_TWO(F_ACTIVE, "ActiveState", 0, BK_ALARM_CH_ACTIVE),
    [F_INPUTNODE] = { "0:InputNode", -1, EV | PR, 0, 0, PT,
                      UA_NS0ID_NODEID },
    [F_SUPPRESSED] = { "0:SuppressedOrShelved", -1, EV | PR, 0,
                       BK_ALARM_CH_SHELVING, PT, UA_NS0ID_BOOLEAN },
    [F_MAXSHELVED] = { "0:MaxTimeShelved", -1, EV | PR, 0, 0, PT,
                       UA_NS0ID_DURATION },
    [F_SHELVING] = { "0:ShelvingState", -1, BK_AN_OBJ, 0, 0,
                     UA_NS0ID_SHELVEDSTATEMACHINETYPE, 0 },
    [F_SHELV_CUR] = { "0:ShelvingState/0:CurrentState", F_SHELVING, EV, 0,
                      BK_ALARM_CH_SHELVING,
                      UA_NS0ID_FINITESTATEVARIABLETYPE, LT },
    [F_SHELV_CUR_ID] = { "0:ShelvingState/0:CurrentState/0:Id",
                         F_SHELV_CUR, EV | PR, 0, BK_ALARM_CH_SHELVING, PT,
                         UA_NS0ID_NODEID },
    [F_SHELV_UNSHELVE] = { "0:ShelvingState/0:UnshelveTime", F_SHELVING,
                           EV | PR, 0, BK_ALARM_CH_SHELVING, PT,
                           UA_NS0ID_DURATION },
    [F_LIMIT] = { "0:LimitState", -1, BK_AN_OBJ, BK_AN_EXCL, 0,
                  UA_NS0ID_EXCLUSIVELIMITSTATEMACHINETYPE, 0 },
    [F_LIMIT_CUR] = { "0:LimitState/0:CurrentState", F_LIMIT, EV,
                      BK_AN_EXCL, BK_ALARM_CH_LIMIT,
                      UA_NS0ID_FINITESTATEVARIABLETYPE, LT },
    [F_LIMIT_CUR_ID] = { "0:LimitState/0:CurrentState/0:Id", F_LIMIT_CUR,
                         EV | PR, BK_AN_EXCL, BK_ALARM_CH_LIMIT, PT,
                         UA_NS0ID_NODEID },
    [F_HHLIMIT] = { "0:HighHighLimit", -1, EV | PR, BK_AN_LIM_HH, 0, PT,
                    UA_NS0ID_DOUBLE },
    [F_HLIMIT] = { "0:HighLimit", -1, EV | PR, BK_AN_LIM_H, 0, PT,
                   UA_NS0ID_DOUBLE },
    [F_LLIMIT] = { "0:LowLimit", -1, EV | PR, BK_AN_LIM_L, 0, PT,
                   UA_NS0ID_DOUBLE },
    [F_LLLIMIT] = { "0:LowLowLimit", -1, EV | PR, BK_AN_LIM_LL, 0, PT,
                    UA_NS0ID_DOUBLE },
    BK_AN_TWO(F_HH, "HighHighState", BK_AN_ST_HH, BK_ALARM_CH_LIMIT),
    BK_AN_TWO(F_H, "HighState", BK_AN_ST_H, BK_ALARM_CH_LIMIT),
    BK_AN_TWO(F_L, "LowState", BK_AN_ST_L, BK_ALARM_CH_LIMIT),
    BK_AN_TWO(F_LL, "LowLowState", BK_AN_ST_LL, BK_ALARM_CH_LIMIT),
    [F_NORMALSTATE] = { "0:NormalState", -1, EV | PR, BK_AN_OFFNORMAL, 0,
                        PT, UA_NS0ID_NODEID },
    [F_NORMALVALUE] = { "1:NormalValue", -1, 0, BK_AN_OFFNORMAL, 0,
                        UA_NS0ID_BASEDATAVARIABLETYPE, UA_NS0ID_DOUBLE },
};

#undef EV
#undef PR
#undef PT
#undef TS
#undef CV
#undef LT
#undef DTM

/* One condition. */
struct bk_alarmnode_one {
    struct bk_alarm_def   def;
    struct bk_alarm_state st;
    uint32_t              cond;         /* node indices */
    uint32_t              source;
    uint32_t              input;
    uint32_t              type;         /* its ObjectType */
    uint32_t              input_slot;
    uint32_t              next;         /* next alarm of input_slot */
    int64_t               time;         /* Time of the last event */
    int64_t               comment_ts;
    uint8_t               last_id[16];  /* EventId of the last event */
    char                  name[BK_ALARMCFG_NAME_MAX];
    char                  message[BK_ALARMCFG_MSG_MAX];
    char                  comment[BK_AN_COMMENT_MAX];
    char                  user[BK_AN_USER_MAX];
    bool                  normal_later; /* adopted: normal read at start */
    bool                  discrete;     /* adopted DiscreteAlarmType */
    bool                  has_condition;    /* the file's HasCondition */
    uint32_t              normal_node;  /* adopted: NormalState's target */
    uint32_t              slot[BK_AN_NF];   /* SHM_NONE: no such field or
                                               not ours to write */
    uint32_t              node[BK_AN_NF];
    uint32_t              meth[BK_AN_NMETH];   /* an instance's own method
                                                  nodes, SHM_NONE */
};

static bool bk_an_has(const struct bk_alarmnode_one *a, uint8_t need);
static uint32_t bk_an_ns0(const struct shm_nodestore *ns, uint32_t id);
static uint32_t bk_an_lookup(const struct shm_nodestore *ns,
                             const char *text);
static uint32_t bk_an_node(struct shm_nodestore *ns, uint16_t idns,
                           const char *id, uint8_t nc, uint16_t bns,
                           const char *bname, size_t blen, uint32_t parent,
                           uint32_t reftype, uint32_t type_def);
static int bk_an_field_id(const struct bk_an_field *t, char *id, size_t at,
                          size_t cap);
static int bk_an_idbase(const struct shm_nodestore *ns, uint32_t cond,
                        char *id, size_t cap, uint16_t *idns);
static int bk_an_build(struct bk_alarmnode_one *a,
                       const struct bk_alarmnode_kids *kids,
                       struct shm_nodestore *ns, uint32_t *slot);
static uint32_t bk_an_parent(const struct shm_nodestore *ns, uint32_t node);
static int bk_an_add_one(struct bk_alarmnode_one *a,
                         const struct bk_alarmcfg_one *c,
                         struct shm_nodestore *ns, uint32_t *slot,
                         const char *where, char *err, size_t errlen);
static void bk_an_from_adopt(struct bk_alarmnode_one *a,
                             const struct bk_alarmnode_adopt *ad,
                             const struct shm_nodestore *ns);
static int bk_an_byobj_cmp(const void *x, const void *y);
static uint32_t bk_an_name_hash(const char *p, size_t n);
static int bk_an_hash_init(struct bk_alarmnode *an);
static uint32_t bk_an_hash_find(const struct bk_alarmnode *an,
                                uint32_t slot);
static bool bk_an_number(const uint8_t *b, uint32_t len, double *x);
static void bk_an_value(const struct bk_alarmnode *an,
                        const struct bk_alarmnode_one *a, int f,
                        int64_t now, struct ua_variant *v, void *scratch);
static int bk_an_emit(struct bk_alarmnode *an, struct bk_alarmnode_one *a,
                      uint32_t ch, int64_t now, bool all, bool event);
static void bk_an_on_change(void *arg, uint32_t slot, const uint8_t *bytes,
                            uint32_t len, int64_t ts);
static struct bk_alarmnode_one *bk_an_of(struct bk_alarmnode *an,
                                         uint32_t obj, bool shelving);
static uint32_t bk_an_method_of(const struct bk_alarmnode *an,
                                const struct shm_fo_call *r);
static ua_status bk_an_run(struct bk_alarmnode_one *a, uint32_t method,
                           const struct ua_variant *in, uint32_t nin,
                           int64_t now, uint32_t *ch);
static void bk_an_batch(struct bk_alarmnode *an, struct bk_alarmnode_one *a,
                        uint32_t ch, int64_t now);
static void bk_an_audit(struct bk_alarmnode *an,
                        const struct bk_alarmnode_one *a, uint32_t mid,
                        ua_status st, const char *user,
                        const struct ua_string *entry,
                        const struct ua_variant *in, uint32_t nin,
                        const uint8_t *eid, int64_t now);

/* ------------------------------------------------------------ the build */

static bool
bk_an_has(const struct bk_alarmnode_one *a, uint8_t need)
{
    const struct bk_alarm_def *d = &a->def;
    bool lim = d->type == BK_ALARM_EXCLUSIVE_LIMIT
               || d->type == BK_ALARM_NON_EXCLUSIVE_LIMIT;
    bool nonex = d->type == BK_ALARM_NON_EXCLUSIVE_LIMIT;

    switch (need) {
    case BK_AN_ALL: return true;
    case BK_AN_CONFIRM: return d->confirm;
    case BK_AN_EXCL: return d->type == BK_ALARM_EXCLUSIVE_LIMIT;
    case BK_AN_LIM_HH: return lim && (d->limits & BK_ALARM_LIM_HH);
    case BK_AN_LIM_H: return lim && (d->limits & BK_ALARM_LIM_H);
    case BK_AN_LIM_L: return lim && (d->limits & BK_ALARM_LIM_L);
    case BK_AN_LIM_LL: return lim && (d->limits & BK_ALARM_LIM_LL);
    case BK_AN_ST_HH: return nonex && (d->limits & BK_ALARM_LIM_HH);
    case BK_AN_ST_H: return nonex && (d->limits & BK_ALARM_LIM_H);
    case BK_AN_ST_L: return nonex && (d->limits & BK_ALARM_LIM_L);
    case BK_AN_ST_LL: return nonex && (d->limits & BK_ALARM_LIM_LL);
    case BK_AN_OFFNORMAL:
        return d->type == BK_ALARM_OFF_NORMAL && !a->discrete;
    default: return false;
    }
}

static uint32_t
bk_an_ns0(const struct shm_nodestore *ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(ns, &k);
}

/* The node a NodeId text names, or SHM_NONE. */
static uint32_t
bk_an_lookup(const struct shm_nodestore *ns, const char *text)
{
    uint8_t            abuf[BK_ALARMCFG_ID_MAX];
    struct ua_arena    a;
    struct ua_nodeid   id;
    struct shm_nodekey k;
    size_t             used;

    ua_arena_init(&a, abuf, sizeof(abuf));
    if (ua_nodeid_parse(text, strlen(text), 0, &a, &id, &used) != UA_GOOD
        || used != strlen(text))
        return SHM_NONE;
    k.ns = id.ns;
    k.idtype = id.idtype;
    k.num = 0;
    k.bytes = NULL;
    k.len = 0;
    if (id.idtype == UA_IDTYPE_NUMERIC) {
        k.num = id.id.num;
    } else if (id.idtype == UA_IDTYPE_GUID) {
        k.bytes = (const uint8_t *)&id.id.guid;
        k.len = sizeof(id.id.guid);
    } else {
        k.bytes = id.id.str.data;
        k.len = id.id.str.len > 0 ? (uint32_t)id.id.str.len : 0;
    }
    return shm_nodestore_lookup(ns, &k);
}

/* A node ns=idns;s=id of class nc, browse name bns:bname, from parent by
 * reftype (ns=0 ids), of type type_def. */
static uint32_t
bk_an_node(struct shm_nodestore *ns, uint16_t idns, const char *id,
           uint8_t nc, uint16_t bns, const char *bname, size_t blen,
           uint32_t parent, uint32_t reftype, uint32_t type_def)
{
    struct shm_nodekey k = { .ns = idns, .idtype = SHM_ID_STRING };
    struct shm_node   *n;
    uint32_t           idx;

    k.bytes = (const uint8_t *)id;
    k.len = (uint32_t)strlen(id);
    idx = shm_nodestore_add(ns, &k, nc);
    if (idx == SHM_NONE)
        return SHM_NONE;
    n = shm_nodestore_node(ns, idx);
    n->browse_ns = bns;
    n->browse_name = shm_nodestore_intern(ns, bname, (uint32_t)blen);
    n->dn_text = n->browse_name;
    if (n->browse_name == 0
        || shm_nodestore_add_ref(ns, parent, bk_an_ns0(ns, reftype), idx)
               != 0
        || shm_nodestore_add_ref(ns, idx,
                                 bk_an_ns0(ns, UA_NS0ID_HASTYPEDEFINITION),
                                 bk_an_ns0(ns, type_def)) != 0)
        return SHM_NONE;
    return idx;
}

/*
 * The Object that holds node (a hierarchical reference to it recorded so
 * far), or SHM_NONE.  A walk of the references being built: once per
 * alarm without a source, at start.
 */
static uint32_t
bk_an_parent(const struct shm_nodestore *ns, uint32_t node)
{
    uint32_t org = bk_an_ns0(ns, UA_NS0ID_ORGANIZES);
    uint32_t hc = bk_an_ns0(ns, UA_NS0ID_HASCOMPONENT);

    for (uint32_t i = 0; i < ns->npending; i++) {
        const struct shm_pending_ref *p = &ns->pending[i];

        if (p->dst == node && (p->reftype_node == org || p->reftype_node == hc)
            && ns->nodes[p->src].node_class == SHM_NC_OBJECT)
            return p->src;
    }
    return SHM_NONE;
}

uint32_t
bk_alarmnode_kid(const struct bk_alarmnode_kids *kids,
                 const struct shm_nodestore *ns, uint32_t parent,
                 uint16_t bns, const char *name)
{
    uint32_t lo = 0, hi, len = (uint32_t)strlen(name);

    if (kids == NULL || parent == SHM_NONE)
        return SHM_NONE;
    hi = kids->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (kids->e[mid][0] < parent)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < kids->n && kids->e[lo][0] == parent; lo++) {
        const struct shm_node *c = &ns->nodes[kids->e[lo][1]];
        uint32_t               cl = 0;
        const uint8_t         *cn = shm_nodestore_string(ns, c->browse_name,
                                                         &cl);

        if (c->browse_ns == bns && cn != NULL && cl == len
            && memcmp(cn, name, len) == 0)
            return kids->e[lo][1];
    }
    return SHM_NONE;
}

void
bk_alarmnode_plan(const struct bk_alarmcfg *cfg, uint32_t nadopt,
                  struct shm_plan *p)
{
    uint64_t n = (cfg != NULL ? cfg->n : 0) + (uint64_t)nadopt;

    if (n == 0)
        return;
    p->nodes += (uint32_t)(n * (BK_AN_NF + 1));
    /* Each node's parent and type, the source's, the methods. */
    p->refs += (uint32_t)(2 * n * (2 * (BK_AN_NF + 1) + 12));
    p->strings += n * (BK_AN_NF + 1) * (BK_AN_ID_MAX / 2)
                  + 64 * BK_AN_NF + 8192;
    p->slots += (uint32_t)(n * BK_AN_NF);
    p->vheap += n * (BK_AN_NF * 64 + 4 * BK_ALARMCFG_MSG_MAX);
}

/* Append field t's path names to id[at] ("." before each): the new
 * length, or -1 when it does not fit cap. */
static int
bk_an_field_id(const struct bk_an_field *t, char *id, size_t at, size_t cap)
{
    for (const char *p = t->path; *p != '\0';) {
        const char *colon = strchr(p, ':');
        size_t      len = strcspn(colon + 1, "/");

        if (at + 1 + len >= cap)
            return -1;
        id[at++] = '.';
        memcpy(id + at, colon + 1, len);
        at += len;
        p = colon + 1 + len;
        if (*p == '/')
            p++;
    }
    id[at] = '\0';
    return (int)at;
}

/* The prefix of the NodeIds added under an adopted condition: its
 * string identifier, or its number in decimal (namespace *idns, the
 * condition's).  Its length, or -1 (a Guid or ByteString NodeId, or too
 * long). */
static int
bk_an_idbase(const struct shm_nodestore *ns, uint32_t cond, char *id,
             size_t cap, uint16_t *idns)
{
    struct shm_nodekey k;
    int                n;

    shm_nodestore_key(ns, cond, &k);
    *idns = k.ns;
    if (k.idtype == SHM_ID_NUMERIC)
        n = snprintf(id, cap, "%u", k.num);
    else if (k.idtype == SHM_ID_STRING && k.len < BK_AN_ID_MAX / 2)
        n = snprintf(id, cap, "%.*s", (int)k.len, (const char *)k.bytes);
    else
        return -1;
    return n > 0 && (size_t)n < cap ? n : -1;
}

/* The methods of a condition: { the field they hang under (-1: the
 * condition), the ns=0 method }. */
static const int32_t bk_an_methods[BK_AN_NMETH][2] = {
    { -1, UA_NS0ID_CONDITIONTYPE_ENABLE },
    { -1, UA_NS0ID_CONDITIONTYPE_DISABLE },
    { -1, UA_NS0ID_CONDITIONTYPE_ADDCOMMENT },
    { -1, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE },
    { F_CONFIRMED, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_CONFIRM },
    { F_SHELVING, UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVE },
    { F_SHELVING, UA_NS0ID_SHELVEDSTATEMACHINETYPE_ONESHOTSHELVE },
    { F_SHELVING, UA_NS0ID_SHELVEDSTATEMACHINETYPE_UNSHELVE },
};
static const char *const bk_an_method_names[BK_AN_NMETH] = {
    "Enable", "Disable", "AddComment", "Acknowledge", "Confirm",
    "TimedShelve", "OneShotShelve", "Unshelve"
};

/*
 * a's nodes under a->cond (made already for a configured alarm; the
 * file's Object for an adopted one, kids its children): each field's
 * node, the one of the file when kids has it, else a new one; the
 * HasCondition from the source, the source an event notifier the Server
 * object reaches, the methods.  0, or -1 (a NodeId taken, the segment
 * full).
 */
static int
bk_an_build(struct bk_alarmnode_one *a, const struct bk_alarmnode_kids *kids,
            struct shm_nodestore *ns, uint32_t *slot)
{
    uint32_t hc = UA_NS0ID_HASCONDITION;
    char     id[BK_AN_ID_MAX];
    uint16_t idns = 1;
    int      n;

    if (kids == NULL)
        n = snprintf(id, sizeof(id), BK_AN_PREFIX "%s", a->name);
    else
        n = bk_an_idbase(ns, a->cond, id, sizeof(id), &idns);
    if (n < 0)
        return -1;
    /* The source HasCondition it (unless the file says so), and is an
     * event notifier the Server object reaches. */
    if (!a->has_condition
        && shm_nodestore_add_ref(ns, a->source, bk_an_ns0(ns, hc), a->cond)
               != 0)
        return -1;
    if (!(ns->nodes[a->source].event_notifier & 0x01)) {
        ns->nodes[a->source].event_notifier |= 0x01;
        if (shm_nodestore_add_ref(ns, bk_an_ns0(ns, UA_NS0ID_SERVER),
                                  bk_an_ns0(ns, UA_NS0ID_HASNOTIFIER),
                                  a->source) != 0)
            return -1;
    }
    for (int f = 0; f < BK_AN_NF; f++) {
        const struct bk_an_field *t = &bk_an_fields[f];
        const char               *name = strrchr(t->path, '/');
        const char               *bname;
        uint32_t                  parent, mine;
        struct shm_node          *nd;

        a->slot[f] = SHM_NONE;
        a->node[f] = SHM_NONE;
        if (!bk_an_has(a, t->need))
            continue;
        name = name != NULL ? name + 1 : t->path;
        bname = strchr(name, ':') + 1;
        parent = t->parent < 0 ? a->cond : a->node[t->parent];
        if (kids != NULL && f == F_NORMALVALUE) {
            /* NormalState names the file's own Variable: not ours. */
            a->node[f] = a->normal_node;
            continue;
        }
        mine = bk_alarmnode_kid(kids, ns, parent, (uint16_t)(name[0] - '0'),
                                bname);
        if (mine != SHM_NONE) {
            /* The file's: ours to write, read-only to clients. */
            a->node[f] = mine;
            nd = shm_nodestore_node(ns, mine);
            if (nd->node_class == SHM_NC_VARIABLE) {
                nd->access_level_ex = 1;
                nd->user_access_level = 1;
                a->slot[f] = nd->u.var.slot;
            }
            continue;
        }
        if (bk_an_field_id(t, id, (size_t)n, sizeof(id)) < 0)
            return -1;
        a->node[f] = bk_an_node(ns, idns, id, (t->flags & BK_AN_OBJ)
                                                  ? SHM_NC_OBJECT
                                                  : SHM_NC_VARIABLE,
                                (uint16_t)(name[0] - '0'), bname,
                                strlen(bname), parent,
                                (t->flags & BK_AN_PROP)
                                    ? UA_NS0ID_HASPROPERTY
                                    : UA_NS0ID_HASCOMPONENT,
                                t->type_def);
        if (a->node[f] == SHM_NONE)
            return -1;
        if (t->flags & BK_AN_OBJ)
            continue;
        nd = shm_nodestore_node(ns, a->node[f]);
        nd->u.var.data_type = bk_an_ns0(ns, t->data_type);
        nd->u.var.value_rank = -1;
        nd->access_level_ex = 1;        /* CurrentRead */
        nd->user_access_level = 1;
        nd->u.var.slot = a->slot[f] = (*slot)++;
    }
    for (int m = 0; m < BK_AN_NMETH; m++) {
        uint32_t from = bk_an_methods[m][0] < 0
                            ? a->cond : a->node[bk_an_methods[m][0]];

        a->meth[m] = bk_alarmnode_kid(kids, ns, from, 0,
                                      bk_an_method_names[m]);
        if (from != SHM_NONE && a->meth[m] == SHM_NONE
            && shm_nodestore_add_ref(ns, from,
                                     bk_an_ns0(ns, UA_NS0ID_HASCOMPONENT),
                                     bk_an_ns0(ns, (uint32_t)
                                                   bk_an_methods[m][1]))
                   != 0)
            return -1;
    }
    return 0;
}

static int
bk_an_add_one(struct bk_alarmnode_one *a, const struct bk_alarmcfg_one *c,
              struct shm_nodestore *ns, uint32_t *slot, const char *where,
              char *err, size_t errlen)
{
    static const uint32_t types[] = {
        0, UA_NS0ID_EXCLUSIVELIMITALARMTYPE,
        UA_NS0ID_NONEXCLUSIVELIMITALARMTYPE, UA_NS0ID_OFFNORMALALARMTYPE,
        UA_NS0ID_ALARMCONDITIONTYPE
    };
    char id[BK_AN_ID_MAX];

    memset(a, 0, sizeof(*a));
    a->def = c->def;
    a->next = SHM_NONE;
    a->normal_node = SHM_NONE;
    memcpy(a->name, c->name, sizeof(a->name));
    if (c->message[0] != '\0')
        memcpy(a->message, c->message, sizeof(a->message));
    else
        snprintf(a->message, sizeof(a->message), "%s", c->name);
    a->input = a->input_slot = SHM_NONE;
    if (c->def.type != BK_ALARM_EXTERNAL) {
        a->input = bk_an_lookup(ns, c->input);
        if (a->input == SHM_NONE
            || ns->nodes[a->input].node_class != SHM_NC_VARIABLE
            || ns->nodes[a->input].u.var.slot == SHM_NONE) {
            snprintf(err, errlen, "%s[alarm %s] input: %s is not a Variable "
                     "of the address space", where, c->name, c->input);
            return -1;
        }
        a->input_slot = ns->nodes[a->input].u.var.slot;
    }
    a->source = c->source[0] != '\0' ? bk_an_lookup(ns, c->source)
                                     : bk_an_parent(ns, a->input);
    if (a->source == SHM_NONE
        || ns->nodes[a->source].node_class != SHM_NC_OBJECT) {
        snprintf(err, errlen, "%s[alarm %s] source: %s is not an Object "
                 "of the address space", where, c->name,
                 c->source[0] != '\0' ? c->source : "the input's parent");
        return -1;
    }
    a->type = bk_an_ns0(ns, types[c->def.type]);
    snprintf(id, sizeof(id), BK_AN_PREFIX "%s", c->name);
    a->cond = bk_an_node(ns, 1, id, SHM_NC_OBJECT, 1, c->name,
                         strlen(c->name), a->source, UA_NS0ID_HASCOMPONENT,
                         types[c->def.type]);
    if (a->cond == SHM_NONE || bk_an_build(a, NULL, ns, slot) != 0) {
        snprintf(err, errlen, "%s[alarm %s]: cannot add its nodes (a NodeId "
                 "taken, or the segment is full)", where, c->name);
        return -1;
    }
    return 0;
}

/* a from NodeSet instance ad (no nodes yet). */
static void
bk_an_from_adopt(struct bk_alarmnode_one *a,
                 const struct bk_alarmnode_adopt *ad,
                 const struct shm_nodestore *ns)
{
    memset(a, 0, sizeof(*a));
    a->def = ad->def;
    a->next = SHM_NONE;
    memcpy(a->name, ad->name, sizeof(a->name));
    memcpy(a->message, ad->message, sizeof(a->message));
    a->cond = ad->cond;
    a->input = ad->input;
    a->input_slot = ns->nodes[ad->input].u.var.slot;
    a->source = ad->source;
    a->type = ad->type;
    a->normal_node = ad->normal;
    a->normal_later = ad->normal_later;
    a->discrete = ad->discrete;
    a->has_condition = ad->has_condition;
}

bool
bk_alarmnode_adoptable(const struct bk_alarmnode_adopt *ad,
                       const struct bk_alarmnode_kids *kids,
                       const struct shm_nodestore *ns, char *why,
                       size_t whylen)
{
    struct bk_alarmnode_one *a = bk_alloc(sizeof(*a));
    char                     id[BK_AN_ID_MAX];
    uint16_t                 idns;
    int                      n;
    bool                     ok = false;

    if (a == NULL) {
        snprintf(why, whylen, "out of memory");
        return false;
    }
    bk_an_from_adopt(a, ad, ns);
    n = bk_an_idbase(ns, ad->cond, id, sizeof(id), &idns);
    if (n < 0) {
        snprintf(why, whylen, "its NodeId is neither numeric nor a string "
                 "of at most %d bytes", BK_AN_ID_MAX / 2 - 1);
        goto out;
    }
    /* The build's walk without building: the file's node of each field
     * (its class right), else a free NodeId for a new one. */
    for (int f = 0; f < BK_AN_NF; f++) {
        const struct bk_an_field *t = &bk_an_fields[f];
        const char               *name = strrchr(t->path, '/');
        uint32_t                  parent, mine;
        uint8_t                   nc = (t->flags & BK_AN_OBJ)
                                           ? SHM_NC_OBJECT : SHM_NC_VARIABLE;

        a->node[f] = SHM_NONE;
        if (!bk_an_has(a, t->need) || f == F_NORMALVALUE)
            continue;
        name = name != NULL ? name + 1 : t->path;
        parent = t->parent < 0 ? a->cond : a->node[t->parent];
        mine = bk_alarmnode_kid(kids, ns, parent, (uint16_t)(name[0] - '0'),
                                strchr(name, ':') + 1);
        if (mine != SHM_NONE) {
            if (ns->nodes[mine].node_class != nc) {
                snprintf(why, whylen, "its %s is not %s", t->path,
                         nc == SHM_NC_OBJECT ? "an Object" : "a Variable");
                goto out;
            }
            a->node[f] = mine;
            continue;
        }
        /* A placeholder: any index but SHM_NONE (not a parent of the
         * file's then). */
        a->node[f] = ns->nnodes;
        {
            struct shm_nodekey k = { .ns = idns, .idtype = SHM_ID_STRING };
            int                len = bk_an_field_id(t, id, (size_t)n,
                                                    sizeof(id));

            if (len < 0) {
                snprintf(why, whylen, "the NodeId of its %s would be longer "
                         "than %d bytes", t->path, BK_AN_ID_MAX - 1);
                goto out;
            }
            k.bytes = (const uint8_t *)id;
            k.len = (uint32_t)len;
            if (shm_nodestore_lookup(ns, &k) != SHM_NONE) {
                snprintf(why, whylen, "the NodeId ns=%u;s=%s for its missing "
                         "%s is taken", idns, id, t->path);
                goto out;
            }
        }
    }
    ok = true;
out:
    bk_free(a);
    return ok;
}

int
bk_alarmnode_add(struct bk_alarmnode *an, const struct bk_alarmcfg *cfg,
                 const struct bk_alarmnode_adopt *ad, uint32_t nadopt,
                 const struct bk_alarmnode_kids *kids,
                 struct shm_nodestore *ns, uint32_t *slot, char *err,
                 size_t errlen)
{
    uint32_t ncfg = cfg != NULL ? cfg->n : 0;

    memset(an, 0, sizeof(*an));
    if (ncfg + nadopt == 0)
        return 0;
    an->a = bk_calloc(ncfg + nadopt, sizeof(*an->a));
    an->keys = bk_calloc(ncfg + nadopt, sizeof(*an->keys));
    an->rec = bk_alloc(BK_AN_REC_CAP);
    an->scratch = bk_alloc(BK_AN_SCRATCH);
    if (an->a == NULL || an->keys == NULL || an->rec == NULL
        || an->scratch == NULL) {
        snprintf(err, errlen, "alarms: out of memory");
        bk_alarmnode_clear(an);
        return -1;
    }
    an->rec_cap = BK_AN_REC_CAP;
    /* The instances first: their nodes were added before the
     * configured ones', the conditions stay in node order. */
    for (uint32_t i = 0; i < nadopt; i++) {
        struct bk_alarmnode_one *a = &an->a[an->n];

        bk_an_from_adopt(a, &ad[i], ns);
        memcpy(an->keys[an->n], ad[i].key, sizeof(an->keys[0]));
        if (bk_an_build(a, kids, ns, slot) != 0) {
            snprintf(err, errlen, "%salarm %s: cannot add its nodes (a "
                     "NodeId taken, or the segment is full)", ad[i].where,
                     ad[i].key);
            bk_alarmnode_clear(an);
            return -1;
        }
        an->n++;
    }
    an->nadopted = an->n;
    for (uint32_t i = 0; i < ncfg; i++) {
        memcpy(an->keys[an->n], cfg->a[i].name, sizeof(cfg->a[i].name));
        if (bk_an_add_one(&an->a[an->n], &cfg->a[i], ns, slot, "", err,
                          errlen) != 0) {
            char where[BK_ALARMNODE_WHERE_MAX];

            /* Again with the file and line (found only now). */
            bk_alarmcfg_where(cfg, i, where, sizeof(where));
            (void)bk_an_add_one(&an->a[an->n], &cfg->a[i], ns, slot, where,
                                err, errlen);
            bk_alarmnode_clear(an);
            return -1;
        }
        an->n++;
    }
    return 0;
}

/* ------------------------------------------------------------ the index */

static int
bk_an_hash_init(struct bk_alarmnode *an)
{
    uint32_t cap = 16;

    while (cap < 2 * an->n)
        cap <<= 1;
    an->hmask = cap - 1;
    an->hslot = bk_alloc((size_t)cap * 4);
    an->halarm = bk_alloc((size_t)cap * 4);
    an->watch = bk_calloc((an->nslots + 63) / 64, 8);
    an->hname = bk_alloc((size_t)cap * 4);
    an->hname_mask = cap - 1;
    an->byobj = bk_alloc((size_t)an->n * 2 * sizeof(*an->byobj));
    if (an->hslot == NULL || an->halarm == NULL || an->watch == NULL
        || an->hname == NULL || an->byobj == NULL)
        return -1;
    memset(an->hslot, 0xFF, (size_t)cap * 4);
    memset(an->hname, 0xFF, (size_t)cap * 4);
    /* The methods' objects: each condition and its ShelvingState. */
    an->nbyobj = 0;
    for (uint32_t i = 0; i < an->n; i++) {
        an->byobj[an->nbyobj][0] = an->a[i].cond;
        an->byobj[an->nbyobj++][1] = i << 1;
        if (an->a[i].node[F_SHELVING] != SHM_NONE) {
            an->byobj[an->nbyobj][0] = an->a[i].node[F_SHELVING];
            an->byobj[an->nbyobj++][1] = i << 1 | 1;
        }
    }
    qsort(an->byobj, an->nbyobj, sizeof(*an->byobj), bk_an_byobj_cmp);
    /* The external alarms by name, for the feed. */
    for (uint32_t i = 0; i < an->n; i++) {
        uint32_t h;

        if (an->a[i].def.type != BK_ALARM_EXTERNAL)
            continue;
        h = bk_an_name_hash(an->a[i].name, strlen(an->a[i].name))
            & an->hname_mask;
        while (an->hname[h] != SHM_NONE)
            h = (h + 1) & an->hname_mask;
        an->hname[h] = i;
    }
    /* Backwards: each input's chain in configuration order. */
    for (uint32_t i = an->n; i-- > 0;) {
        struct bk_alarmnode_one *a = &an->a[i];
        uint32_t                 s = a->input_slot;
        uint32_t                 h = (s * 0x9E3779B1u) & an->hmask;

        if (s == SHM_NONE)
            continue;                   /* external: no input */
        while (an->hslot[h] != SHM_NONE && an->hslot[h] != s)
            h = (h + 1) & an->hmask;
        a->next = an->hslot[h] == s ? an->halarm[h] : SHM_NONE;
        an->hslot[h] = s;
        an->halarm[h] = i;
        an->watch[s >> 6] |= UINT64_C(1) << (s & 63);
    }
    return 0;
}

static int
bk_an_byobj_cmp(const void *x, const void *y)
{
    const uint32_t *a = x, *b = y;

    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* FNV-1a of a name. */
static uint32_t
bk_an_name_hash(const char *p, size_t n)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}

/* The first alarm of input slot, SHM_NONE when none. */
static uint32_t
bk_an_hash_find(const struct bk_alarmnode *an, uint32_t slot)
{
    uint32_t h = (slot * 0x9E3779B1u) & an->hmask;

    while (an->hslot[h] != SHM_NONE) {
        if (an->hslot[h] == slot)
            return an->halarm[h];
        h = (h + 1) & an->hmask;
    }
    return SHM_NONE;
}

/* ------------------------------------------------------------ values */

/* A scalar number (or Boolean) Variant (Part 6 §5.2.2.16) as a double. */
static bool
bk_an_number(const uint8_t *b, uint32_t len, double *x)
{
    union {
        int8_t   i8; int16_t i16; int32_t i32; int64_t i64;
        uint16_t u16; uint32_t u32; uint64_t u64; float f; double d;
    } u;
    static const uint8_t size[12] = { 0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };
    uint8_t t;

    if (len == 0 || (b[0] & 0xC0) != 0 || b[0] == 0 || b[0] > UA_BT_DOUBLE)
        return false;
    t = b[0];
    if (len < 1u + size[t])
        return false;
    memcpy(&u, b + 1, size[t]);
    switch (t) {
    case UA_BT_BOOLEAN: *x = b[1] != 0; break;
    case UA_BT_SBYTE: *x = u.i8; break;
    case UA_BT_BYTE: *x = b[1]; break;
    case UA_BT_INT16: *x = u.i16; break;
    case UA_BT_UINT16: *x = u.u16; break;
    case UA_BT_INT32: *x = u.i32; break;
    case UA_BT_UINT32: *x = u.u32; break;
    case UA_BT_INT64: *x = (double)u.i64; break;
    case UA_BT_UINT64: *x = (double)u.u64; break;
    case UA_BT_FLOAT: *x = u.f; break;
    default: *x = u.d; break;
    }
    return true;
}

/* Scratch for one field's value. */
union bk_an_scratch {
    struct ua_string        s;
    struct ua_localizedtext lt;
    struct ua_nodeid        id;
    int64_t                 dt;
    double                  d;
    uint16_t                u16;
    uint32_t                u32;
    bool                    b;
};

static void
bk_an_text(union bk_an_scratch *s, struct ua_variant *v, const char *text)
{
    memset(&s->lt, 0, sizeof(s->lt));
    s->lt.mask = UA_LT_TEXT;
    s->lt.locale.len = -1;
    s->lt.text.len = (int32_t)strlen(text);
    s->lt.text.data = (uint8_t *)(uintptr_t)text;
    ua_variant_set_scalar(v, &s->lt, UA_BT_LOCALIZEDTEXT);
}

/* The Variant of field f of a (pointing into a, the store or scratch). */
static void
bk_an_value(const struct bk_alarmnode *an, const struct bk_alarmnode_one *a,
            int f, int64_t now, struct ua_variant *v, void *scratch)
{
    static const char *const lim_names[BK_ALARM_NLIM] = {
        "HighHigh", "High", "Low", "LowLow"
    };
    static const uint32_t lim_ids[BK_ALARM_NLIM] = {
        UA_NS0ID_EXCLUSIVELIMITSTATEMACHINETYPE_HIGHHIGH,
        UA_NS0ID_EXCLUSIVELIMITSTATEMACHINETYPE_HIGH,
        UA_NS0ID_EXCLUSIVELIMITSTATEMACHINETYPE_LOW,
        UA_NS0ID_EXCLUSIVELIMITSTATEMACHINETYPE_LOWLOW
    };
    static const char *const shelv_names[3] = {
        "Unshelved", "TimedShelved", "OneShotShelved"
    };
    static const uint32_t shelv_ids[3] = {
        UA_NS0ID_SHELVEDSTATEMACHINETYPE_UNSHELVED,
        UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVED,
        UA_NS0ID_SHELVEDSTATEMACHINETYPE_ONESHOTSHELVED
    };
    const struct bk_alarm_state *st = &a->st;
    union bk_an_scratch         *s = scratch;
    bool                         two = false, on = false;
    int64_t                      tt = 0;
    const char                  *t_text = "", *f_text = "";
    int                          base = -1, lim = -1;

    memset(s, 0, sizeof(*s));
    /* The TwoStateVariables: which, and their state. */
    switch (f) {
    case F_ENABLED ... F_ENABLED_F:
        base = F_ENABLED; on = st->enabled; tt = st->enabled_ts;
        t_text = "Enabled"; f_text = "Disabled";
        break;
    case F_ACKED ... F_ACKED_F:
        base = F_ACKED; on = st->acked; tt = st->acked_ts;
        t_text = "Acknowledged"; f_text = "Unacknowledged";
        break;
    case F_CONFIRMED ... F_CONFIRMED_F:
        base = F_CONFIRMED; on = st->confirmed; tt = st->confirmed_ts;
        t_text = "Confirmed"; f_text = "Unconfirmed";
        break;
    case F_ACTIVE ... F_ACTIVE_F:
        base = F_ACTIVE; on = st->active; tt = st->active_ts;
        t_text = "Active"; f_text = "Inactive";
        break;
    case F_HH ... F_HH_F: base = F_HH; lim = BK_ALARM_I_HH; break;
    case F_H ... F_H_F: base = F_H; lim = BK_ALARM_I_H; break;
    case F_L ... F_L_F: base = F_L; lim = BK_ALARM_I_L; break;
    case F_LL ... F_LL_F: base = F_LL; lim = BK_ALARM_I_LL; break;
    default: break;
    }
    if (lim >= 0) {
        on = (st->limits >> lim) & 1;
        tt = st->limit_ts;
        t_text = "Active";
        f_text = "Inactive";
    }
    two = base >= 0;
    if (two) {
        switch (f - base) {
        case 0: bk_an_text(s, v, on ? t_text : f_text); return;
        case 1:
            s->b = on;
            ua_variant_set_scalar(v, &s->b, UA_BT_BOOLEAN);
            return;
        case 2:
            s->dt = tt;
            ua_variant_set_scalar(v, &s->dt, UA_BT_DATETIME);
            return;
        case 3: bk_an_text(s, v, t_text); return;
        default: bk_an_text(s, v, f_text); return;
        }
    }
    switch (f) {
    case F_EVENTID:
        s->s.len = 16;
        s->s.data = (uint8_t *)(uintptr_t)a->last_id;
        ua_variant_set_scalar(v, &s->s, UA_BT_BYTESTRING);
        return;
    case F_EVENTTYPE:
        bk_event_nodeid(an->ns, a->type, &s->id);
        break;
    case F_SOURCENODE:
        bk_event_nodeid(an->ns, a->source, &s->id);
        break;
    case F_INPUTNODE:
        bk_event_nodeid(an->ns, a->input, &s->id);
        break;
    case F_NORMALSTATE:
        bk_event_nodeid(an->ns, a->node[F_NORMALVALUE], &s->id);
        break;
    case F_CLASSID:
        s->id = ua_nodeid_num(0, UA_NS0ID_PROCESSCONDITIONCLASSTYPE);
        break;
    case F_BRANCHID:
        break;                          /* the null NodeId */
    case F_SOURCENAME: {
        uint32_t       len = 0;
        const uint8_t *p = shm_nodestore_string(
            an->ns, an->ns->nodes[a->source].browse_name, &len);

        s->s.len = p != NULL ? (int32_t)len : 0;
        s->s.data = (uint8_t *)(uintptr_t)p;
        ua_variant_set_scalar(v, &s->s, UA_BT_STRING);
        return;
    }
    case F_CONDNAME:
    case F_CLIENTUSERID:
        s->s = ua_string_from(f == F_CONDNAME ? a->name : a->user);
        ua_variant_set_scalar(v, &s->s, UA_BT_STRING);
        return;
    case F_TIME:
    case F_RECEIVETIME:
        s->dt = a->time;
        ua_variant_set_scalar(v, &s->dt, UA_BT_DATETIME);
        return;
    case F_QUALITY_TS:
    case F_LASTSEV_TS:
    case F_COMMENT_TS:
        s->dt = f == F_QUALITY_TS    ? st->enabled_ts
                : f == F_LASTSEV_TS  ? st->severity_ts
                                     : a->comment_ts;
        ua_variant_set_scalar(v, &s->dt, UA_BT_DATETIME);
        return;
    case F_MESSAGE: bk_an_text(s, v, a->message); return;
    case F_CLASSNAME: bk_an_text(s, v, "Process"); return;
    case F_COMMENT: bk_an_text(s, v, a->comment); return;
    case F_SEVERITY:
    case F_LASTSEV:
        s->u16 = f == F_SEVERITY ? st->severity : st->last_severity;
        ua_variant_set_scalar(v, &s->u16, UA_BT_UINT16);
        return;
    case F_RETAIN:
    case F_SUPPRESSED:
        s->b = f == F_RETAIN ? bk_alarm_retain(&a->def, st)
                             : st->shelving != BK_ALARM_UNSHELVED;
        ua_variant_set_scalar(v, &s->b, UA_BT_BOOLEAN);
        return;
    case F_QUALITY:
        s->u32 = UA_GOOD;
        ua_variant_set_scalar(v, &s->u32, UA_BT_STATUSCODE);
        return;
    case F_MAXSHELVED:
    case F_SHELV_UNSHELVE:
    case F_HHLIMIT: case F_HLIMIT: case F_LLIMIT: case F_LLLIMIT:
    case F_NORMALVALUE:
        if (f == F_MAXSHELVED)
            s->d = a->def.max_shelved_ms;
        else if (f == F_SHELV_UNSHELVE)
            s->d = st->shelving == BK_ALARM_UNSHELVED || st->unshelve_at < now
                       ? 0
                       : (double)(st->unshelve_at - now)
                             / (double)BK_ALARM_TICKS_MS;
        else if (f == F_NORMALVALUE)
            s->d = a->def.normal;
        else
            s->d = a->def.lim[f - F_HHLIMIT];
        ua_variant_set_scalar(v, &s->d, UA_BT_DOUBLE);
        return;
    case F_SHELV_CUR:
        bk_an_text(s, v, shelv_names[st->shelving]);
        return;
    case F_SHELV_CUR_ID:
        s->id = ua_nodeid_num(0, shelv_ids[st->shelving]);
        break;
    case F_LIMIT_CUR:
    case F_LIMIT_CUR_ID: {
        int i = st->limits == 0 ? -1 : __builtin_ctz(st->limits);

        if (f == F_LIMIT_CUR) {
            bk_an_text(s, v, i < 0 ? "" : lim_names[i]);
            return;
        }
        if (i >= 0)
            s->id = ua_nodeid_num(0, lim_ids[i]);
        break;
    }
    default:
        ua_variant_set_scalar(v, NULL, 0);
        v->type = 0;                    /* the null Variant */
        return;
    }
    ua_variant_set_scalar(v, &s->id, UA_BT_NODEID);
}

/*
 * Write a's variables (all, or those the changes ch rewrite) from one
 * event record built here, and send the record when event (a new EventId
 * and Time then).  0, or -ENOSPC
 * when a slot did not fit the value heap.
 */
static int
bk_an_emit(struct bk_alarmnode *an, struct bk_alarmnode_one *a, uint32_t ch,
           int64_t now, bool all, bool event)
{
    struct bk_event     e;
    struct ua_variant   v;
    union bk_an_scratch s;
    struct shm_value    m = { 0 };
    uint8_t             one[BK_AN_VAR_CAP];
    int                 rc = 0;

    /* A new event; the variables alone (the start, a restore) keep the
     * last event's EventId and Time. */
    if (event || a->time == 0) {
        bk_event_id(a->last_id);
        a->time = now;
    }
    m.status = UA_GOOD;
    m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    m.source_ts = now;
    m.server_ts = now;
    bk_event_begin(&e, an->rec, an->rec_cap, a->source, a->type);
    for (int f = 0; f < BK_AN_NF; f++) {
        const struct bk_an_field *t = &bk_an_fields[f];
        const uint8_t            *bytes = NULL;
        size_t                    len = 0;
        bool                      write;

        if (a->node[f] == SHM_NONE || (t->flags & BK_AN_OBJ))
            continue;
        write = all || (t->ch & ch) != 0;
        bk_an_value(an, a, f, now, &v, &s);
        if (t->flags & BK_AN_EVENT) {
            size_t   plen = strlen(t->path);
            uint32_t at = e.len + 6u + (uint32_t)plen;

            if (bk_event_field(&e, t->path, plen, &v) == 0) {
                bytes = e.buf + at;
                len = e.len - at;
            }
        }
        if (!write || a->slot[f] == SHM_NONE)
            continue;
        if (bytes == NULL) {
            if (ua_encode(&v, &ua_types[UA_TYPE_VARIANT], one, sizeof(one),
                          &len) != UA_GOOD)
                continue;
            bytes = one;
        }
        m.len = (uint32_t)len;
        if (bk_value_write(an->val, a->slot[f], bytes, (uint32_t)len, &m)
            != 0)
            rc = -ENOSPC;
    }
    if (!event)
        return rc;
    {
        struct ua_nodeid cid;

        bk_event_nodeid(an->ns, a->cond, &cid);
        ua_variant_set_scalar(&v, &cid, UA_BT_NODEID);
        (void)bk_event_field(&e, "ConditionId", 11, &v);
    }
    if (e.full || bk_event_std(&e, an->ns, now, a->st.severity) != 0) {
        an->st.lost++;
        return rc;
    }
    an->st.transitions++;
    an->dirty = true;
    bk_value_event(an->val, e.buf, e.len);
    return rc;
}

/* ------------------------------------------------------------ run time */

int
bk_alarmnode_start(struct bk_alarmnode *an, const struct shm_nodestore *ns,
                   struct bk_value *val, int64_t now, char *err,
                   size_t errlen)
{
    uint8_t          buf[64];
    struct shm_value m;

    an->ns = ns;
    an->val = val;
    an->nslots = val->vals.nslots;
    if (an->n == 0)
        return 0;
    if (bk_an_hash_init(an) != 0) {
        snprintf(err, errlen, "alarms: out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < an->n; i++) {
        struct bk_alarmnode_one *a = &an->a[i];
        double                   x;

        /* An adopted off-normal alarm whose NormalState names a
         * Variable outside the files: its value now. */
        if (a->normal_later) {
            uint32_t ns_slot = ns->nodes[a->normal_node].u.var.slot;

            if (ns_slot != SHM_NONE
                && shm_value_read(&val->vals, ns_slot, &m, buf,
                                  sizeof(buf)) == 0
                && bk_an_number(buf, m.len, &x))
                a->def.normal = x;
            else
                shm_log(SHM_LOG_WARNING, "alarm %s: NormalState's Variable "
                        "has no number; the normal value is 0", an->keys[i]);
        }
        bk_alarm_init(&a->def, &a->st, now);
        a->comment_ts = now;
        if (a->input_slot != SHM_NONE
            && shm_value_read(&val->vals, a->input_slot, &m, buf,
                              sizeof(buf)) == 0
            && bk_an_number(buf, m.len, &x))
            (void)bk_alarm_input(&a->def, &a->st, x, now);
        if (bk_an_emit(an, a, 0, now, true, false) != 0) {
            snprintf(err, errlen, "[alarm %s]: the value heap is full",
                     a->name);
            return -1;
        }
    }
    bk_value_watch(val, an->watch, bk_an_on_change, an);
    return 0;
}

/* The value path's watcher: an input slot changed. */
static void
bk_an_on_change(void *arg, uint32_t slot, const uint8_t *bytes, uint32_t len,
                int64_t ts)
{
    struct bk_alarmnode *an = arg;
    double               x;

    an->st.evaluations++;
    if (!bk_an_number(bytes, len, &x))
        return;
    for (uint32_t i = bk_an_hash_find(an, slot); i != SHM_NONE;) {
        struct bk_alarmnode_one *a = &an->a[i];
        uint32_t                 ch;

        i = a->next;
        if (bk_alarm_quiet(&a->def, a->st.over, x))
            continue;
        ch = bk_alarm_input(&a->def, &a->st, x, ts);
        if (ch != 0)
            (void)bk_an_emit(an, a, ch, ts, false, true);
    }
}

/* a's changes ch reported, in a value batch of its own if none is
 * open (a method, the tick). */
static void
bk_an_batch(struct bk_alarmnode *an, struct bk_alarmnode_one *a, uint32_t ch,
            int64_t now)
{
    bool open = !an->val->open;

    if (open)
        bk_value_batch_begin(an->val);
    /* A disabled condition reports only its Disable; Enable reports
     * (and writes) its whole state, which followed the input meanwhile. */
    (void)bk_an_emit(an, a, ch, now,
                     a->st.enabled && (ch & BK_ALARM_CH_ENABLED),
                     a->st.enabled || (ch & BK_ALARM_CH_ENABLED));
    if (open)
        bk_value_batch_end(an->val);
}

void
bk_alarmnode_tick(struct bk_alarmnode *an, int64_t now)
{
    an->st.per_second = an->st.transitions - an->st.tick_transitions;
    an->st.tick_transitions = an->st.transitions;
    for (uint32_t i = 0; i < an->n; i++) {
        struct bk_alarmnode_one *a = &an->a[i];
        uint32_t                 ch;

        if (a->st.shelving == BK_ALARM_UNSHELVED)
            continue;
        ch = bk_alarm_tick(&a->st, now);
        if (ch != 0)
            bk_an_batch(an, a, ch, now);
    }
}

/* ------------------------------------------------------------ the feed */

ua_status
bk_alarmnode_feed(struct bk_alarmnode *an, const char *line, size_t len,
                  int64_t now, char *why, size_t whylen)
{
    struct bk_alarmnode_one *a = NULL;
    const char              *p = line, *end = line + len, *e;
    char                     msg[BK_ALARMCFG_MSG_MAX];
    int                      active = -1;
    unsigned long            sev = 0;
    bool                     has_msg = false;
    uint32_t                 ch;

    e = memchr(p, ';', len);
    if (e == NULL)
        e = end;
    if (an->hname != NULL) {
        uint32_t h = bk_an_name_hash(p, (size_t)(e - p)) & an->hname_mask;

        for (; an->hname[h] != SHM_NONE; h = (h + 1) & an->hname_mask) {
            struct bk_alarmnode_one *x = &an->a[an->hname[h]];

            if (strlen(x->name) == (size_t)(e - p)
                && memcmp(x->name, p, (size_t)(e - p)) == 0) {
                a = x;
                break;
            }
        }
    }
    if (a == NULL || a->def.type != BK_ALARM_EXTERNAL) {
        snprintf(why, whylen, "no [alarm %.*s] of type external", (int)(e - p),
                 p);
        return UA_BAD_NODE_ID_UNKNOWN;
    }
    for (p = e; p < end;) {
        const char *k = p + 1, *eq, *v, *ve;

        eq = k;
        while (eq < end && *eq != '=' && *eq != ';')
            eq++;
        if (eq >= end || *eq != '=') {
            snprintf(why, whylen, "\"%.*s\" is not key=value", (int)(eq - k),
                     k);
            return UA_BAD_TYPE_MISMATCH;
        }
        v = eq + 1;
        if (v < end && *v == '"') {
            v++;
            ve = memchr(v, '"', (size_t)(end - v));
            if (ve == NULL) {
                snprintf(why, whylen, "a quote is not closed");
                return UA_BAD_TYPE_MISMATCH;
            }
            p = ve + 1;
        } else {
            ve = memchr(v, ';', (size_t)(end - v));
            if (ve == NULL)
                ve = end;
            p = ve;
        }
        if (p < end && *p != ';') {
            snprintf(why, whylen, "unexpected text \"%.*s\"",
                     (int)(end - p), p);
            return UA_BAD_TYPE_MISMATCH;
        }
#define BK_AN_KEY(s) ((size_t)(eq - k) == sizeof(s) - 1 \
                      && memcmp(k, s, sizeof(s) - 1) == 0)
#define BK_AN_VAL(s) ((size_t)(ve - v) == sizeof(s) - 1 \
                      && memcmp(v, s, sizeof(s) - 1) == 0)
        if (BK_AN_KEY("active")) {
            active = BK_AN_VAL("true") || BK_AN_VAL("1")    ? 1
                     : BK_AN_VAL("false") || BK_AN_VAL("0") ? 0
                                                            : -2;
            if (active == -2) {
                snprintf(why, whylen, "active= is true or false");
                return UA_BAD_TYPE_MISMATCH;
            }
        } else if (BK_AN_KEY("severity")) {
            char  num[8], *ne;
            size_t n = (size_t)(ve - v);

            if (n == 0 || n >= sizeof(num)) {
                snprintf(why, whylen, "severity is 1..1000");
                return UA_BAD_OUT_OF_RANGE;
            }
            memcpy(num, v, n);
            num[n] = '\0';
            sev = strtoul(num, &ne, 10);
            if (*ne != '\0' || sev < 1 || sev > 1000) {
                snprintf(why, whylen, "severity is 1..1000");
                return UA_BAD_OUT_OF_RANGE;
            }
        } else if (BK_AN_KEY("message")) {
            size_t n = (size_t)(ve - v);

            if (n >= sizeof(msg))
                n = sizeof(msg) - 1;
            memcpy(msg, v, n);
            msg[n] = '\0';
            has_msg = true;
        } else {
            snprintf(why, whylen, "unknown option \"%.*s\"", (int)(eq - k),
                     k);
            return UA_BAD_TYPE_MISMATCH;
        }
#undef BK_AN_KEY
#undef BK_AN_VAL
    }
    if (active < 0) {
        snprintf(why, whylen, "active= is missing");
        return UA_BAD_TYPE_MISMATCH;
    }
    ch = 0;
    if (has_msg && strcmp(msg, a->message) != 0) {
        memcpy(a->message, msg, strlen(msg) + 1);
        ch = BK_ALARM_CH_MESSAGE;
    }
    ch |= bk_alarm_set(&a->def, &a->st, active == 1, (uint16_t)sev, now);
    if (ch != 0 && a->st.enabled)
        bk_an_batch(an, a, ch, now);
    return UA_GOOD;
}

/* ------------------------------------------------------------ methods */

/* The condition whose node (shelving: ShelvingState node) is obj. */
static struct bk_alarmnode_one *
bk_an_of(struct bk_alarmnode *an, uint32_t obj, bool shelving)
{
    uint32_t lo = 0, hi = an->nbyobj;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (an->byobj[mid][0] < obj)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < an->nbyobj && an->byobj[lo][0] == obj
        && (an->byobj[lo][1] & 1) == (uint32_t)shelving)
        return &an->a[an->byobj[lo][1] >> 1];
    return NULL;
}

/*
 * The ns=0 method r calls: the method node's own id when it is in
 * namespace 0, else (an instance's own method node, of a NodeSet) the
 * declaration its condition maps it to; 0 when none.
 */
static uint32_t
bk_an_method_of(const struct bk_alarmnode *an, const struct shm_fo_call *r)
{
    const struct shm_nodestore *ns = an->ns;
    const struct shm_node      *m = &ns->nodes[r->method];

    if (m->ns == 0)
        return m->idtype == SHM_ID_NUMERIC ? m->id : 0;
    for (int sh = 0; sh < 2; sh++) {
        struct bk_alarmnode_one *a = bk_an_of((struct bk_alarmnode *)an,
                                              r->object, sh != 0);

        for (int k = 0; a != NULL && k < BK_AN_NMETH; k++)
            if (a->meth[k] == r->method)
                return (uint32_t)bk_an_methods[k][1];
    }
    return 0;
}

/* Method (its ns=0 id) on a with its arguments: the status, *ch. */
static ua_status
bk_an_run(struct bk_alarmnode_one *a, uint32_t method,
          const struct ua_variant *in, uint32_t nin, int64_t now,
          uint32_t *ch)
{
    const struct ua_localizedtext *cmt = NULL;
    ua_status                      st;

    *ch = 0;
    switch (method) {
    case UA_NS0ID_CONDITIONTYPE_ENABLE:
        return bk_alarm_enable(&a->def, &a->st, true, now, ch);
    case UA_NS0ID_CONDITIONTYPE_DISABLE:
        return bk_alarm_enable(&a->def, &a->st, false, now, ch);
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_ONESHOTSHELVE:
        return bk_alarm_shelve_oneshot(&a->def, &a->st, now, ch);
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_UNSHELVE:
        return bk_alarm_unshelve(&a->st, now, ch);
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVE:
        if (nin != 1 || in[0].type != UA_BT_DOUBLE || in[0].is_array)
            return UA_BAD_INVALID_ARGUMENT;
        return bk_alarm_shelve_timed(&a->def, &a->st, *(double *)in[0].data,
                                     now, ch);
    default:
        break;
    }
    /* Acknowledge, Confirm, AddComment: (EventId, Comment). */
    if (nin != 2 || in[0].type != UA_BT_BYTESTRING || in[0].is_array
        || in[1].type != UA_BT_LOCALIZEDTEXT || in[1].is_array)
        return UA_BAD_INVALID_ARGUMENT;
    {
        const struct ua_string *id = in[0].data;

        if (id->len != 16 || memcmp(id->data, a->last_id, 16) != 0)
            return UA_BAD_EVENT_ID_UNKNOWN;
    }
    cmt = in[1].data;
    if (method == UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE)
        st = bk_alarm_ack(&a->def, &a->st, now, ch);
    else if (method == UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_CONFIRM)
        st = bk_alarm_confirm(&a->def, &a->st, now, ch);
    else
        st = bk_alarm_comment(&a->st, ch);
    if (st == UA_GOOD && cmt->text.len > 0) {
        size_t n = (size_t)cmt->text.len;

        if (n >= sizeof(a->comment))
            n = sizeof(a->comment) - 1;
        memcpy(a->comment, cmt->text.data, n);
        a->comment[n] = '\0';
        a->comment_ts = now;
        *ch |= BK_ALARM_CH_COMMENT;
    }
    return st;
}

/* The audit event of a condition method (Part 9 §5.10). */
static void
bk_an_audit(struct bk_alarmnode *an, const struct bk_alarmnode_one *a,
            uint32_t mid, ua_status st, const char *user,
            const struct ua_string *entry,
            const struct ua_variant *in, uint32_t nin, const uint8_t *eid,
            int64_t now)
{
    struct bk_event         e;
    struct ua_variant       v;
    struct ua_string        s;
    struct ua_nodeid        id;
    struct ua_localizedtext lt;
    uint32_t                type;
    const char             *name;
    char                    sn[48];
    bool                    ok = st == UA_GOOD;
    uint16_t                sev = ok ? 100 : 500;

    switch (mid) {
    case UA_NS0ID_CONDITIONTYPE_ENABLE:
        type = UA_NS0ID_AUDITCONDITIONENABLEEVENTTYPE; name = "Enable";
        break;
    case UA_NS0ID_CONDITIONTYPE_DISABLE:
        type = UA_NS0ID_AUDITCONDITIONENABLEEVENTTYPE; name = "Disable";
        break;
    case UA_NS0ID_CONDITIONTYPE_ADDCOMMENT:
        type = UA_NS0ID_AUDITCONDITIONCOMMENTEVENTTYPE; name = "AddComment";
        break;
    case UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE:
        type = UA_NS0ID_AUDITCONDITIONACKNOWLEDGEEVENTTYPE;
        name = "Acknowledge";
        break;
    case UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_CONFIRM:
        type = UA_NS0ID_AUDITCONDITIONCONFIRMEVENTTYPE; name = "Confirm";
        break;
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVE:
        type = UA_NS0ID_AUDITCONDITIONSHELVINGEVENTTYPE;
        name = "TimedShelve";
        break;
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_ONESHOTSHELVE:
        type = UA_NS0ID_AUDITCONDITIONSHELVINGEVENTTYPE;
        name = "OneShotShelve";
        break;
    default:
        type = UA_NS0ID_AUDITCONDITIONSHELVINGEVENTTYPE; name = "Unshelve";
        break;
    }
    bk_event_begin(&e, an->rec, an->rec_cap, a->cond, bk_an_ns0(an->ns, type));
#define BK_AN_F(path, ptr, bt)                                             \
    do {                                                                   \
        ua_variant_set_scalar(&v, (void *)(uintptr_t)(ptr), bt);           \
        (void)bk_event_field(&e, path, sizeof(path) - 1, &v);              \
    } while (0)
    snprintf(sn, sizeof(sn), "Method/%s", name);
    s = ua_string_from(sn);
    BK_AN_F("0:SourceName", &s, UA_BT_STRING);
    memset(&lt, 0, sizeof(lt));
    lt.mask = UA_LT_TEXT;
    lt.locale.len = -1;
    lt.text = ua_string_from(sn);
    BK_AN_F("0:Message", &lt, UA_BT_LOCALIZEDTEXT);
    BK_AN_F("0:ActionTimeStamp", &now, UA_BT_DATETIME);
    BK_AN_F("0:Status", &ok, UA_BT_BOOLEAN);
    s = ua_string_from(an->server_uri != NULL ? an->server_uri : "");
    BK_AN_F("0:ServerId", &s, UA_BT_STRING);
    BK_AN_F("0:ClientAuditEntryId", entry, UA_BT_STRING);
    s = ua_string_from(user);
    BK_AN_F("0:ClientUserId", &s, UA_BT_STRING);
    id = ua_nodeid_num(0, mid);
    BK_AN_F("0:MethodId", &id, UA_BT_NODEID);
    ua_variant_set_array(&v, (void *)(uintptr_t)in, (int32_t)nin,
                         UA_BT_VARIANT);
    (void)bk_event_field(&e, "0:InputArguments", 16, &v);
    if (eid != NULL) {
        s.len = 16;
        s.data = (uint8_t *)(uintptr_t)eid;
        BK_AN_F("0:ConditionEventId", &s, UA_BT_BYTESTRING);
        if (nin == 2 && in[1].type == UA_BT_LOCALIZEDTEXT)
            BK_AN_F("0:Comment", in[1].data, UA_BT_LOCALIZEDTEXT);
    }
    if (mid == UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVE && nin == 1
        && in[0].type == UA_BT_DOUBLE)
        BK_AN_F("0:ShelvingTime", in[0].data, UA_BT_DOUBLE);
#undef BK_AN_F
    if (e.full || bk_event_std(&e, an->ns, now, sev) != 0) {
        an->st.lost++;
        return;
    }
    bk_value_event(an->val, e.buf, e.len);
}

bool
bk_alarmnode_call(struct bk_alarmnode *an, const struct shm_fo_call *r,
                  const uint8_t *args, const char *user, uint32_t user_len,
                  const char *audit, uint32_t audit_len, int64_t now,
                  ua_status *st)
{
    struct ua_string entry = { (int32_t)audit_len,
                               (uint8_t *)(uintptr_t)audit };
    const struct shm_nodestore *ns = an->ns;
    struct bk_alarmnode_one    *a;
    struct ua_variant           in[2];
    struct ua_arena             ar;
    uint32_t                    mid, ch, nin = r->nargs;
    size_t                      off = 0, used;
    bool                        shelving;
    char                        who[BK_AN_USER_MAX];
    uint8_t                     eid[16];
    bool                        with_id;

    if (an->n == 0 || r->method >= ns->nnodes || r->object >= ns->nnodes)
        return false;
    mid = bk_an_method_of(an, r);
    switch (mid) {
    case UA_NS0ID_CONDITIONTYPE_ENABLE:
    case UA_NS0ID_CONDITIONTYPE_DISABLE:
    case UA_NS0ID_CONDITIONTYPE_ADDCOMMENT:
    case UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE:
    case UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_CONFIRM:
        shelving = false;
        break;
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVE:
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_ONESHOTSHELVE:
    case UA_NS0ID_SHELVEDSTATEMACHINETYPE_UNSHELVE:
        shelving = true;
        break;
    default:
        return false;
    }
    a = bk_an_of(an, r->object, shelving);
    if (a == NULL)
        return false;
    /* Acknowledge, Confirm, AddComment: their audit has the EventId. */
    with_id = !shelving && mid != UA_NS0ID_CONDITIONTYPE_ENABLE
              && mid != UA_NS0ID_CONDITIONTYPE_DISABLE;
    an->st.calls++;
    if (user_len >= sizeof(who))
        user_len = sizeof(who) - 1;
    memcpy(who, user, user_len);
    who[user_len] = '\0';
    memcpy(eid, a->last_id, 16);
    *st = UA_BAD_USER_ACCESS_DENIED;
    if (r->role != SHM_FO_ROLE_OPERATOR) {
        nin = 0;
        goto out;
    }
    *st = UA_BAD_INVALID_ARGUMENT;
    if (nin > 2) {
        nin = 0;
        goto out;
    }
    ua_arena_init(&ar, an->scratch, BK_AN_SCRATCH);
    for (uint32_t k = 0; k < nin; k++) {
        if (ua_decode(args + off, r->args_len - off, &used, &in[k],
                      &ua_types[UA_TYPE_VARIANT], &ar, &ua_limits_default)
            != UA_GOOD) {
            nin = k;
            goto out;
        }
        off += used;
    }
    if (nin == 2 && in[0].type == UA_BT_BYTESTRING && !in[0].is_array
        && ((const struct ua_string *)in[0].data)->len == 16)
        memcpy(eid, ((const struct ua_string *)in[0].data)->data, 16);
    *st = bk_an_run(a, mid, in, nin, now, &ch);
    if (*st != UA_GOOD)
        goto out;
    memcpy(a->user, who, user_len + 1);
    bk_an_batch(an, a, ch, now);
    if (an->audit)
        bk_an_audit(an, a, mid, *st, who, &entry, in, nin,
                    with_id ? eid : NULL, now);
    return true;
out:
    an->st.calls_refused++;
    if (an->audit)
        bk_an_audit(an, a, mid, *st, who, &entry, in, nin,
                    with_id ? eid : NULL, now);
    return true;
}

void
bk_alarmnode_count(const struct bk_alarmnode *an,
                   struct bk_alarmnode_counts *c)
{
    memset(c, 0, sizeof(*c));
    for (uint32_t i = 0; i < an->n; i++) {
        const struct bk_alarm_state *s = &an->a[i].st;

        c->active += s->active;
        c->unacked += !s->acked;
        c->shelved += s->shelving != BK_ALARM_UNSHELVED;
        c->retained += bk_alarm_retain(&an->a[i].def, s);
        if (s->active)
            c->band[s->severity <= 333 ? 0 : s->severity <= 666 ? 1 : 2]++;
    }
}

/* ------------------------------------------------------------ saved */

void
bk_alarmnode_saved_get(const struct bk_alarmnode *an, uint32_t i,
                       struct bk_alarmnode_saved *out)
{
    const struct bk_alarmnode_one *a = &an->a[i];

    memset(out, 0, sizeof(*out));
    memcpy(out->name, an->keys[i], sizeof(out->name));
    out->st = a->st;
    out->time = a->time;
    out->comment_ts = a->comment_ts;
    memcpy(out->last_id, a->last_id, 16);
    snprintf(out->comment, sizeof(out->comment), "%s", a->comment);
    snprintf(out->user, sizeof(out->user), "%s", a->user);
    snprintf(out->message, sizeof(out->message), "%s", a->message);
}

bool
bk_alarmnode_saved_put(struct bk_alarmnode *an, uint32_t hint,
                       const struct bk_alarmnode_saved *in)
{
    struct bk_alarmnode_one *a = NULL;

    if (hint < an->n && strcmp(an->keys[hint], in->name) == 0)
        a = &an->a[hint];
    for (uint32_t i = 0; a == NULL && i < an->n; i++)
        if (strcmp(an->keys[i], in->name) == 0)
            a = &an->a[i];
    if (a == NULL)
        return false;
    a->st = in->st;
    a->time = in->time;
    a->comment_ts = in->comment_ts;
    memcpy(a->last_id, in->last_id, 16);
    snprintf(a->comment, sizeof(a->comment), "%s", in->comment);
    snprintf(a->user, sizeof(a->user), "%s", in->user);
    /* An external alarm's message is the feed's; the others' the
     * configuration's (which may have changed). */
    if (a->def.type == BK_ALARM_EXTERNAL && in->message[0] != '\0')
        snprintf(a->message, sizeof(a->message), "%s", in->message);
    return true;
}

void
bk_alarmnode_rewrite(struct bk_alarmnode *an, int64_t now)
{
    bool open = !an->val->open;

    if (open)
        bk_value_batch_begin(an->val);
    for (uint32_t i = 0; i < an->n; i++)
        (void)bk_an_emit(an, &an->a[i], 0, now, true, false);
    if (open)
        bk_value_batch_end(an->val);
}

void
bk_alarmnode_clear(struct bk_alarmnode *an)
{
    if (an->val != NULL && an->val->watch == an->watch)
        bk_value_watch(an->val, NULL, NULL, NULL);
    bk_free(an->a);
    bk_free(an->keys);
    bk_free(an->rec);
    bk_free(an->scratch);
    bk_free(an->hslot);
    bk_free(an->halarm);
    bk_free(an->watch);
    bk_free(an->hname);
    bk_free(an->byobj);
    memset(an, 0, sizeof(*an));
}
