/*
 * broker/alarmnode.h: the alarms as conditions in the address
 * space, and their evaluator in the value path (docs/architecture.md
 * §10.5, docs/operations.md "Alarms").
 *
 * Build (broker/addrspace.c, before the node store is finished): each
 * `[alarm NAME]` (broker/alarmcfg.h) becomes an Object ns=1;s=Alarms.NAME
 * of its type (ExclusiveLimitAlarmType, NonExclusiveLimitAlarmType,
 * OffNormalAlarmType), BrowseName 1:NAME, under its source Object
 * (HasComponent and HasCondition), with the type's variables as nodes of
 * their own (BrowseNames in namespace 0, NodeIds ns=1;s=Alarms.NAME.
 * ActiveState.Id ...): the BaseEventType fields, ConditionType's,
 * AcknowledgeableConditionType's (ConfirmedState only when the alarm uses
 * Confirm), AlarmConditionType's (ShelvingState an Object with its
 * CurrentState), and the limits or LimitState, the per-limit states or
 * NormalState of its type.  Every variable has a value slot.  The source
 * becomes an event notifier and the Server object HasNotifier it.  An
 * alarm instance of an imported NodeSet (struct bk_alarmnode_adopt,
 * broker/alarmnset.h) keeps its Object and the variables its file gives
 * it; the others are added the same way, named after its NodeId.
 *
 * Run: after the build's values, each condition starts from its input's
 * value (no event), its variables written.  Then every stored change of
 * an input slot (a bit in the value path's watch bitmap, bk_value_watch)
 * comes here: a change that exceeds or clears nothing costs a hash probe
 * and bk_alarm_over(); a transition (broker/alarm.h) becomes one event
 * record (broker/event.h) with every event field of the condition, the
 * same encoded Variants written into the changed variables' slots in the
 * same value batch, and the record sent through bk_value_event().  An
 * event carries the condition's NodeId as the field "ConditionId" (the
 * workers answer a select clause of the NodeId attribute with it,
 * worker/monitem_event.c).
 *
 * Broker only, single-threaded.  Allocates at the build only.
 */
#ifndef BK_ALARMNODE_H
#define BK_ALARMNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alarm.h"
#include "alarmcfg.h"
#include "proto/types.h"
#include "shm/fanout.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "value.h"

struct bk_alarmnode_one;

#define BK_ALARMNODE_KEY_MAX 256    /* bytes of a condition's key */
#define BK_ALARMNODE_WHERE_MAX 1200 /* bytes of "FILE:LINE: " */

/*
 * The hierarchical references of the imported NodeSets (HasComponent,
 * HasOrderedComponent, HasProperty, Organizes), as (parent, child) node
 * index pairs sorted by parent: what the build reads to find an
 * instance's own variables (broker/alarmnset.h makes it).
 */
struct bk_alarmnode_kids {
    uint32_t (*e)[2];
    uint32_t   n;
};

/* The child of parent with BrowseName bns:name in kids, or SHM_NONE. */
uint32_t bk_alarmnode_kid(const struct bk_alarmnode_kids *kids,
                          const struct shm_nodestore *ns, uint32_t parent,
                          uint16_t bns, const char *name);

/*
 * An alarm instance of an imported NodeSet (broker/alarmnset.h): its
 * Object is the condition, adopted as it is; the variables of its type
 * that the file leaves out are added (NodeIds in the condition's
 * namespace, "<its identifier>.ActiveState.Id", as for the configured
 * ones), those it has are used and written like any.
 */
struct bk_alarmnode_adopt {
    char                name[BK_ALARMCFG_NAME_MAX];   /* ConditionName */
    char                key[BK_ALARMNODE_KEY_MAX];    /* alarms.state */
    char                message[BK_ALARMCFG_MSG_MAX];
    char                where[BK_ALARMNODE_WHERE_MAX]; /* "FILE:LINE: " */
    struct bk_alarm_def def;
    uint32_t            cond;       /* node indices */
    uint32_t            input;
    uint32_t            source;
    uint32_t            type;       /* its TypeDefinition */
    uint32_t            normal;     /* off-normal: NormalState's Variable */
    bool                normal_later;   /* its value read at the start */
    bool                discrete;   /* a DiscreteAlarmType: no NormalState */
    bool                has_condition;  /* the file says source
                                           HasCondition cond */
};

/* Counters, /stats and /metrics. */
struct bk_alarmnode_stats {
    uint64_t evaluations;       /* input changes evaluated */
    uint64_t transitions;       /* events sent */
    uint64_t lost;              /* events that did not fit a record */
    uint64_t calls;             /* condition methods called */
    uint64_t calls_refused;     /* of those, not Good */
    uint64_t tick_transitions;  /* transitions at the last tick */
    uint64_t per_second;        /* transitions in the last tick's second */
    uint64_t saved;             /* state files written */
};

/* The conditions' states now (bk_alarmnode_count). */
struct bk_alarmnode_counts {
    uint32_t active;
    uint32_t unacked;
    uint32_t shelved;
    uint32_t retained;
    uint32_t band[3];           /* active by Severity: 1-333, 334-666,
                                   667-1000 */
};

/* Every condition of the broker. */
struct bk_alarmnode {
    struct bk_alarmnode_one *a;
    uint32_t                 n;
    uint32_t                 nadopted;      /* of them, NodeSet instances
                                               (the first nadopted) */
    /* Each condition's key (alarms.state): its section's NAME, or an
     * instance's NodeId text (apart from a: not on the hot path). */
    char                   (*keys)[BK_ALARMNODE_KEY_MAX];
    /* Input slot -> first alarm: open addressing, mask + 1 entries. */
    uint32_t                *hslot;
    uint32_t                *halarm;
    uint32_t                 hmask;
    uint64_t                *watch;         /* a bit per value slot */
    /* Condition and ShelvingState nodes -> alarm index << 1 | shelving:
     * (node, that) pairs sorted by node, for the methods. */
    uint32_t               (*byobj)[2];
    uint32_t                 nbyobj;
    /* External alarms by name (the feed's lookup): open addressing,
     * hname_mask + 1 entries of alarm indices, SHM_NONE empty. */
    uint32_t                *hname;
    uint32_t                 hname_mask;
    uint32_t                 nslots;
    const struct shm_nodestore *ns;
    struct bk_value         *val;
    uint8_t                 *rec;           /* one event record */
    uint32_t                 rec_cap;
    uint8_t                 *scratch;       /* a call's arguments */
    /* events.audit: each method call raises its audit event (Part 9
     * §5.10: AuditConditionAcknowledgeEventType, ...), ServerId
     * server_uri.  Set by the caller after the build. */
    bool                     audit;
    const char              *server_uri;
    bool                     dirty;         /* changed since last saved */
    struct bk_alarmnode_stats st;
};

/* What cfg and at most nadopt NodeSet instances add to a segment plan
 * (nodes, references, strings, slots, value heap). */
void bk_alarmnode_plan(const struct bk_alarmcfg *cfg, uint32_t nadopt,
                       struct shm_plan *p);

/*
 * Add the nadopt NodeSet instances ad (their children found in kids) and
 * cfg's conditions to ns (being built; before shm_nodestore_finish), in
 * that order: value slots from *slot on, *slot left past the last.  An
 * input that is not a Variable, a source that is not an Object: -1 with
 * "[alarm NAME] ..." in err.  cfg may be NULL (no alarms).  The
 * instances were checked by broker/alarmnset.c; one whose added nodes
 * cannot be made (a NodeId taken) is -1 with its "FILE:LINE: " too.
 */
int bk_alarmnode_add(struct bk_alarmnode *an, const struct bk_alarmcfg *cfg,
                     const struct bk_alarmnode_adopt *ad, uint32_t nadopt,
                     const struct bk_alarmnode_kids *kids,
                     struct shm_nodestore *ns, uint32_t *slot, char *err,
                     size_t errlen);

/*
 * Can instance ad be adopted: each variable of its type that the file
 * has of the right NodeClass, each NodeId to add free?  true, or false
 * with why (broker/alarmnset.c refuses the instance then).
 */
bool bk_alarmnode_adoptable(const struct bk_alarmnode_adopt *ad,
                            const struct bk_alarmnode_kids *kids,
                            const struct shm_nodestore *ns, char *why,
                            size_t whylen);

/*
 * After shm_nodestore_finish, in the build's value batch: every condition
 * from its input's current value, its variables written; then watch the
 * inputs on val.  0 or -1 (the value heap is full).
 */
int bk_alarmnode_start(struct bk_alarmnode *an,
                       const struct shm_nodestore *ns, struct bk_value *val,
                       int64_t now, char *err, size_t errlen);

/*
 * A method the broker runs itself, never forwarded (Part 9 §5.5.4
 * Enable, §5.5.5 Disable, §5.5.6 AddComment, §5.7.3 Acknowledge, §5.7.4
 * Confirm, §5.8.10 TimedShelve, OneShotShelve, Unshelve): call r (the
 * worker's record; its args_len bytes of arguments at args, checked by
 * the worker against the method's InputArguments) names one of these
 * methods (the ns=0 method nodes) on one of our conditions (the shelving
 * ones on its ShelvingState).  false when it does not (the caller
 * forwards it).  Else true and *st: BadUserAccessDenied unless the
 * caller's role is operator; BadEventIdUnknown for an EventId that is not
 * the condition's last event's; BadInvalidArgument for arguments that do
 * not decode; then the state machine's (broker/alarm.h).  A Good call
 * records user as ClientUserId, a comment given (not empty) as Comment,
 * and sends the condition's event.  With audit, every call, Good or
 * refused (by the role check too), also raises its audit event,
 * SourceNode the condition, SourceName "Method/NAME", Severity 100 (500
 * when refused), ClientAuditEntryId the request's auditEntryId (audit,
 * audit_len bytes, Part 5 §6.4.3).  Opens its own value batch when none
 * is open.
 */
bool bk_alarmnode_call(struct bk_alarmnode *an, const struct shm_fo_call *r,
                       const uint8_t *args, const char *user,
                       uint32_t user_len, const char *audit,
                       uint32_t audit_len, int64_t now, ua_status *st);

/*
 * A feed line `alarm=NAME;active=true|false[;severity=N][;message=TEXT]`
 * (line and len: after "alarm="; docs/feed.md "Alarms") for an alarm of
 * type external: its condition active or not (going active: unacknowl-
 * edged), Severity N (1..1000; default the alarm's), Message TEXT (kept
 * until another line gives one; quoted when it holds a ';').  An event
 * when anything changed, in the caller's value batch (or one of its
 * own).  Good; BadNodeIdUnknown (no external alarm of that name),
 * BadTypeMismatch (a bad or missing option), BadOutOfRange (severity);
 * why says what.  The name is found by a hash of the external alarms'
 * names (built at the start): O(1) per line.
 */
ua_status bk_alarmnode_feed(struct bk_alarmnode *an, const char *line,
                            size_t len, int64_t now, char *why,
                            size_t whylen);

/* The time passes (once a second): shelvings that ran out end.  Opens
 * its own value batch when one has to. */
void bk_alarmnode_tick(struct bk_alarmnode *an, int64_t now);

/* The conditions' states, for /stats (a walk of them all). */
void bk_alarmnode_count(const struct bk_alarmnode *an,
                        struct bk_alarmnode_counts *c);

/* What of a condition survives a restart (broker/alarmstate.c). */
struct bk_alarmnode_saved {
    char                  name[BK_ALARMNODE_KEY_MAX];  /* its key */
    struct bk_alarm_state st;
    int64_t               time;         /* of its last event */
    int64_t               comment_ts;
    uint8_t               last_id[16];  /* its last EventId */
    char                  comment[256];
    char                  user[64];
    char                  message[BK_ALARMCFG_MSG_MAX];   /* its Message */
};

/* Condition i's persistent part. */
void bk_alarmnode_saved_get(const struct bk_alarmnode *an, uint32_t i,
                            struct bk_alarmnode_saved *out);

/*
 * Give the condition named in->name (at index hint, when that is it) the
 * saved state: false when no condition has that name.  Its variables are
 * written by bk_alarmnode_rewrite().
 */
bool bk_alarmnode_saved_put(struct bk_alarmnode *an, uint32_t hint,
                            const struct bk_alarmnode_saved *in);

/* Write every condition's variables again (own value batch). */
void bk_alarmnode_rewrite(struct bk_alarmnode *an, int64_t now);

/* Free everything (the value path stops watching). */
void bk_alarmnode_clear(struct bk_alarmnode *an);

#endif /* BK_ALARMNODE_H */
