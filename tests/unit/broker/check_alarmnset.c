/*
 * tests/unit/broker/check_alarmnset.c: alarm instances declared in
 * imported NodeSets (broker/alarmnset.c, the adoption in
 * broker/alarmnode.c) through the whole address-space build
 * (tests/unit/broker/nodeset_fixture.h): which types make a condition,
 * the properties read (InputNode, limits, NormalState, Severity,
 * ConditionName, ConfirmedState), the source found (HasCondition,
 * parent), the file's own variables used and the missing ones added,
 * the evaluator watching the input, and each bad instance refused with
 * its file, line and node while everything else stays.
 */
#include "nodeset_fixture.h"

#include "broker/alarmnode.h"
#include "broker/alarmstate.h"

/* A property 0:NAME of parent with a value (XML). */
#define PROP(id, name, parent, dt, value)                                   \
    "<UAVariable NodeId=\"" id "\" BrowseName=\"" name "\" DataType=\"" dt  \
    "\"><References><Reference ReferenceType=\"i=46\" IsForward=\"false\">" \
    parent "</Reference><Reference ReferenceType=\"i=40\">i=68</Reference>" \
    "</References><Value>" value "</Value></UAVariable>\n"
#define DBL(x) "<uax:Double>" x "</uax:Double>"
#define NID(x) "<uax:NodeId><uax:Identifier>" x "</uax:Identifier></uax:NodeId>"
/* An Object of type type under parent (HasComponent). */
#define OBJ(id, name, parent, type)                                         \
    "<UAObject NodeId=\"" id "\" BrowseName=\"" name "\"><References>"      \
    "<Reference ReferenceType=\"i=47\" IsForward=\"false\">" parent         \
    "</Reference><Reference ReferenceType=\"i=40\">" type "</Reference>"    \
    "</References></UAObject>\n"
/* A Double variable under parent with value x. */
#define VAR(id, name, parent, x)                                            \
    "<UAVariable NodeId=\"" id "\" BrowseName=\"" name "\" DataType=\"i=11\"" \
    " AccessLevel=\"3\"><References><Reference ReferenceType=\"i=47\" "     \
    "IsForward=\"false\">" parent "</Reference></References><Value>"        \
    DBL(x) "</Value></UAVariable>\n"

/* The tank: Tank (an Object under Objects) HasCondition LevelAlarm
 * (numeric NodeId, ExclusiveLevelAlarmType) on Tank.Level = 50, whose
 * file has ActiveState/Id and a Severity of its own. */
#define TANK                                                                \
    "<UAObject NodeId=\"ns=1;s=Tank\" BrowseName=\"1:Tank\"><References>"   \
    "<Reference ReferenceType=\"i=35\" IsForward=\"false\">i=85</Reference>" \
    "<Reference ReferenceType=\"i=40\">i=58</Reference>"                    \
    "<Reference ReferenceType=\"i=9006\">ns=1;i=5001</Reference>"           \
    "</References></UAObject>\n"                                            \
    VAR("ns=1;s=Tank.Level", "1:Level", "ns=1;s=Tank", "50")                \
    OBJ("ns=1;i=5001", "1:LevelAlarm", "ns=1;s=Tank", "i=9482")             \
    PROP("ns=1;i=5002", "InputNode", "ns=1;i=5001", "i=17",                 \
         NID("ns=1;s=Tank.Level"))                                          \
    PROP("ns=1;i=5003", "HighHighLimit", "ns=1;i=5001", "i=11", DBL("90"))  \
    PROP("ns=1;i=5004", "HighLimit", "ns=1;i=5001", "i=11", DBL("80"))      \
    PROP("ns=1;i=5005", "LowLimit", "ns=1;i=5001", "i=11", DBL("20"))       \
    PROP("ns=1;i=5008", "Severity", "ns=1;i=5001", "i=5",                   \
         "<uax:UInt16>650</uax:UInt16>")                                    \
    "<UAVariable NodeId=\"ns=1;i=5006\" BrowseName=\"ActiveState\" "        \
    "DataType=\"i=21\"><References><Reference ReferenceType=\"i=47\" "      \
    "IsForward=\"false\">ns=1;i=5001</Reference><Reference "                \
    "ReferenceType=\"i=40\">i=8995</Reference></References></UAVariable>\n" \
    PROP("ns=1;i=5007", "Id", "ns=1;i=5006", "i=1",                         \
         "<uax:Boolean>false</uax:Boolean>")

static const char *
tank_file(void)
{
    return put("tank.xml", HEAD("<Uri>" URI_A "</Uri>") TANK TAIL);
}

/* Node i's value as a double (Boolean, Double, UInt16). */
static double
num_of(uint32_t i)
{
    struct ua_variant v;

    value_of(i, &v);
    switch (v.type) {
    case UA_BT_BOOLEAN: return *(bool *)v.data;
    case UA_BT_UINT16: return *(uint16_t *)v.data;
    case UA_BT_DOUBLE: return *(double *)v.data;
    default: ck_abort_msg("type %d", v.type); return 0;
    }
}

static int
text_is(uint32_t i, const char *want)
{
    struct ua_variant v;

    value_of(i, &v);
    return v.type == UA_BT_LOCALIZEDTEXT
           && ustr_is(&((struct ua_localizedtext *)v.data)->text, want);
}

/* Write x to node i's slot through the value path (the evaluator runs). */
static void
set(uint32_t i, double x)
{
    uint8_t          b[9];
    struct shm_value m = { 0 };

    b[0] = UA_BT_DOUBLE;
    memcpy(b + 1, &x, 8);
    m.status = UA_GOOD;
    m.len = 9;
    bk_value_batch_begin(&as.val);
    ck_assert_int_eq(bk_value_write(&as.val, node(i)->u.var.slot, b, 9, &m),
                     0);
    bk_value_batch_end(&as.val);
}

START_TEST(test_exclusive_level)
{
    uint32_t tank, cond, level, id, acked;
    uint32_t ack;
    struct bk_alarmnode_saved sv;

    build_ok(tank_file());
    ack = lookup_num(0, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE);
    ck_assert_uint_eq(as.alarms.n, 1);
    ck_assert_uint_eq(as.alarms_refused, 0);
    tank = lookup_str(2, "Tank");
    cond = lookup_num(2, 5001);
    level = lookup_str(2, "Tank.Level");
    /* The file's HasCondition, once; the source a notifier of Server. */
    ck_assert_int_eq(has_ref(tank, lookup_num(0, UA_NS0ID_HASCONDITION),
                             cond), 1);
    ck_assert_int_eq(has_ref(lookup_num(0, UA_NS0ID_SERVER),
                             lookup_num(0, UA_NS0ID_HASNOTIFIER), tank), 1);
    ck_assert_uint_eq(node(tank)->event_notifier & 1, 1);
    /* The file's ActiveState/Id is used, none added beside it... */
    id = lookup_num(2, 5007);
    ck_assert_uint_eq(lookup_str(2, "5001.ActiveState.Id"), SHM_NONE);
    ck_assert_uint_eq(node(id)->access_level_ex, 1);
    ck_assert_int_eq(num_of(id), 0);
    /* ...the missing ones added from the type, named after the
     * condition. */
    acked = lookup_str(2, "5001.AckedState.Id");
    ck_assert_int_eq(num_of(acked), 1);
    ck_assert(text_is(lookup_str(2, "5001.LimitState.CurrentState"), ""));
    ck_assert(text_is(lookup_str(2, "5001.ActiveState.TrueState"),
                      "Active"));
    ck_assert_uint_ne(lookup_str(2, "5001.ShelvingState.CurrentState.Id"),
                      SHM_NONE);
    ck_assert_uint_eq(lookup_str(2, "5001.LowLowLimit"), SHM_NONE);
    ck_assert_int_eq(has_ref(cond, lookup_num(0, UA_NS0ID_HASCOMPONENT),
                             ack), 1);
    /* Its name (the BrowseName), severity (the file's) and key. */
    {
        struct ua_variant v;

        value_of(lookup_str(2, "5001.ConditionName"), &v);
        ck_assert(ustr_is(v.data, "LevelAlarm"));
    }
    bk_alarmnode_saved_get(&as.alarms, 0, &sv);
    ck_assert_str_eq(sv.name, "ns=2;i=5001");
    ck_assert_uint_eq(sv.st.severity, 650);
    /* The input crosses High: active, High, unacknowledged. */
    set(level, 85);
    ck_assert_int_eq(num_of(id), 1);
    ck_assert(text_is(lookup_str(2, "5001.LimitState.CurrentState"),
                      "High"));
    ck_assert_int_eq(num_of(acked), 0);
    ck_assert_int_eq(num_of(lookup_str(2, "5001.Retain")), 1);
    set(level, 95);
    ck_assert(text_is(lookup_str(2, "5001.LimitState.CurrentState"),
                      "HighHigh"));
    set(level, 50);
    ck_assert_int_eq(num_of(id), 0);
    ck_assert_uint_eq(as.alarms.st.transitions, 3);
}
END_TEST

START_TEST(test_types_and_sources)
{
    const char *f = put("kinds.xml", HEAD("<Uri>" URI_A "</Uri><Uri>" APP_URI
                                          "</Uri>")
        /* A file's own type under NonExclusiveLevelAlarmType. */
        "<UAObjectType NodeId=\"ns=1;i=100\" BrowseName=\"1:MyLevel\">"
        "<References><Reference ReferenceType=\"i=45\" IsForward=\"false\">"
        "i=10060</Reference></References></UAObjectType>\n"
        "<UAObject NodeId=\"ns=1;s=P\" BrowseName=\"1:P\"><References>"
        "<Reference ReferenceType=\"i=35\" IsForward=\"false\">i=85"
        "</Reference></References></UAObject>\n"
        VAR("ns=1;s=P.X", "1:X", "ns=1;s=P", "0")
        VAR("ns=1;s=P.Run", "1:Run", "ns=1;s=P", "1")
        VAR("ns=1;s=P.RunNormal", "1:RunNormal", "ns=1;s=P", "1")
        OBJ("ns=1;s=P.Mine", "1:Mine", "ns=1;s=P", "ns=1;i=100")
        PROP("ns=1;s=P.Mine.In", "InputNode", "ns=1;s=P.Mine", "i=17",
             NID("ns=1;s=P.X"))
        PROP("ns=1;s=P.Mine.L", "LowLimit", "ns=1;s=P.Mine", "i=11",
             DBL("-5"))
        "<UAVariable NodeId=\"ns=1;s=P.Mine.CS\" BrowseName=\"ConfirmedState\""
        " DataType=\"i=21\"><References><Reference ReferenceType=\"i=47\" "
        "IsForward=\"false\">ns=1;s=P.Mine</Reference></References>"
        "</UAVariable>\n"
        PROP("ns=1;s=P.Mine.N", "ConditionName", "ns=1;s=P.Mine", "i=12",
             "<uax:String>Low X</uax:String>")
        /* Off-normal with NormalState; a DiscreteAlarmType without. */
        OBJ("ns=1;s=P.Off", "1:Off", "ns=1;s=P", "i=10637")
        PROP("ns=1;s=P.Off.In", "InputNode", "ns=1;s=P.Off", "i=17",
             NID("ns=1;s=P.Run"))
        PROP("ns=1;s=P.Off.NS", "NormalState", "ns=1;s=P.Off", "i=17",
             NID("ns=1;s=P.RunNormal"))
        OBJ("ns=1;s=P.Disc", "1:Disc", "ns=1;s=P", "i=10523")
        PROP("ns=1;s=P.Disc.In", "InputNode", "ns=1;s=P.Disc", "i=17",
             NID("ns=1;s=P.X"))
        /* Normal from a Variable outside the file (read at start). */
        OBJ("ns=1;s=P.Off2", "1:Off2", "ns=1;s=P", "i=11753")
        PROP("ns=1;s=P.Off2.In", "InputNode", "ns=1;s=P.Off2", "i=17",
             NID("ns=1;s=P.Run"))
        PROP("ns=1;s=P.Off2.NS", "NormalState", "ns=1;s=P.Off2", "i=17",
             NID("ns=2;s=v0"))
        TAIL);
    uint32_t p;

    build_ok(f);
    ck_assert_uint_eq(as.alarms_refused, 0);
    ck_assert_uint_eq(as.alarms.n, 4);
    p = lookup_str(2, "P");
    /* Each under its parent P, which HasCondition it now. */
    ck_assert_int_eq(has_ref(p, lookup_num(0, UA_NS0ID_HASCONDITION),
                             lookup_str(2, "P.Mine")), 1);
    ck_assert_int_eq(has_ref(p, lookup_num(0, UA_NS0ID_HASCONDITION),
                             lookup_str(2, "P.Off")), 1);
    /* The non-exclusive one: LowState, no LimitState; Confirm used;
     * its ConditionName the file's. */
    ck_assert_uint_ne(lookup_str(2, "P.Mine.LowState.Id"), SHM_NONE);
    ck_assert_uint_eq(lookup_str(2, "P.Mine.LimitState"), SHM_NONE);
    ck_assert_uint_ne(lookup_str(2, "P.Mine.ConfirmedState.Id"), SHM_NONE);
    {
        struct ua_variant v;

        value_of(lookup_str(2, "P.Mine.N"), &v);   /* the file's */
        ck_assert(ustr_is(v.data, "Low X"));
    }
    /* The off-normal: NormalState the file's, no NormalValue added;
     * normal (Run = RunNormal = 1): inactive; off normal: active. */
    ck_assert_uint_eq(lookup_str(2, "P.Off.NormalValue"), SHM_NONE);
    ck_assert_int_eq(num_of(lookup_str(2, "P.Off.ActiveState.Id")), 0);
    /* Off2's normal is v0's value (0): Run = 1 is off normal. */
    ck_assert_int_eq(num_of(lookup_str(2, "P.Off2.ActiveState.Id")), 1);
    set(lookup_str(2, "P.Run"), 0);
    ck_assert_int_eq(num_of(lookup_str(2, "P.Off.ActiveState.Id")), 1);
    ck_assert_int_eq(num_of(lookup_str(2, "P.Off2.ActiveState.Id")), 0);
    /* The discrete one: no NormalState; active while X is not 0. */
    ck_assert_uint_eq(lookup_str(2, "P.Disc.NormalState"), SHM_NONE);
    ck_assert_int_eq(num_of(lookup_str(2, "P.Disc.ActiveState.Id")), 0);
    set(lookup_str(2, "P.X"), -7);
    ck_assert_int_eq(num_of(lookup_str(2, "P.Disc.ActiveState.Id")), 1);
    ck_assert_int_eq(num_of(lookup_str(2, "P.Mine.LowState.Id")), 1);
}
END_TEST

/* Instance NAME of type under P with the given children (XML). */
#define BAD(name, type, kids)                                               \
    OBJ("ns=1;s=" name, "1:" name, "ns=1;s=P", type) kids

START_TEST(test_refused)
{
    const char *f = put("bad.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;s=P\" BrowseName=\"1:P\"><References>"
        "<Reference ReferenceType=\"i=35\" IsForward=\"false\">i=85"
        "</Reference></References></UAObject>\n"
        VAR("ns=1;s=P.X", "1:X", "ns=1;s=P", "0")
        BAD("NoInput", "i=9482",
            PROP("ns=1;s=NoInput.H", "HighLimit", "ns=1;s=NoInput", "i=11",
                 DBL("1")))
        BAD("InputObject", "i=9482",
            PROP("ns=1;s=InputObject.In", "InputNode", "ns=1;s=InputObject",
                 "i=17", NID("ns=1;s=P"))
            PROP("ns=1;s=InputObject.H", "HighLimit", "ns=1;s=InputObject",
                 "i=11", DBL("1")))
        BAD("NoLimits", "i=9341",
            PROP("ns=1;s=NoLimits.In", "InputNode", "ns=1;s=NoLimits",
                 "i=17", NID("ns=1;s=P.X")))
        BAD("Disorder", "i=9906",
            PROP("ns=1;s=Disorder.In", "InputNode", "ns=1;s=Disorder",
                 "i=17", NID("ns=1;s=P.X"))
            PROP("ns=1;s=Disorder.L", "LowLimit", "ns=1;s=Disorder", "i=11",
                 DBL("10"))
            PROP("ns=1;s=Disorder.H", "HighLimit", "ns=1;s=Disorder", "i=11",
                 DBL("5")))
        BAD("NoNormal", "i=10637",
            PROP("ns=1;s=NoNormal.In", "InputNode", "ns=1;s=NoNormal",
                 "i=17", NID("ns=1;s=P.X")))
        BAD("Deviation", "i=9764",
            PROP("ns=1;s=Deviation.In", "InputNode", "ns=1;s=Deviation",
                 "i=17", NID("ns=1;s=P.X")))
        BAD("ObjState", "i=9482",
            PROP("ns=1;s=ObjState.In", "InputNode", "ns=1;s=ObjState",
                 "i=17", NID("ns=1;s=P.X"))
            PROP("ns=1;s=ObjState.H", "HighLimit", "ns=1;s=ObjState",
                 "i=11", DBL("1"))
            OBJ("ns=1;s=ObjState.A", "AckedState", "ns=1;s=ObjState",
                "i=58"))
        /* A good one among them. */
        BAD("Good", "i=9482",
            PROP("ns=1;s=Good.In", "InputNode", "ns=1;s=Good", "i=17",
                 NID("ns=1;s=P.X"))
            PROP("ns=1;s=Good.H", "HighLimit", "ns=1;s=Good", "i=11",
                 DBL("1")))
        TAIL);
    static const char *const why[] = {
        "NoInput (ExclusiveLevelAlarmType) refused: no InputNode",
        "InputObject (ExclusiveLevelAlarmType) refused: its InputNode is "
        "not a Variable",
        "NoLimits (ExclusiveLimitAlarmType) refused: no limit property",
        "Disorder (NonExclusiveLimitAlarmType) refused: its limits are not "
        "in order",
        "NoNormal (OffNormalAlarmType) refused: no NormalState",
        "Deviation (ExclusiveDeviationAlarmType) refused: the deviation",
        "ObjState (ExclusiveLevelAlarmType) refused: its 0:AckedState is not "
        "a Variable",
    };
    char  log[8192];
    FILE *mem;
    int   saved = dup(2);

    /* The warnings go to standard error: catch them. */
    mem = tmpfile();
    ck_assert_ptr_nonnull(mem);
    dup2(fileno(mem), 2);
    build_ok(f);
    dup2(saved, 2);
    close(saved);
    rewind(mem);
    log[fread(log, 1, sizeof(log) - 1, mem)] = '\0';
    fclose(mem);
    ck_assert_uint_eq(as.alarms_refused, 7);
    ck_assert_uint_eq(as.alarms.n, 1);
    for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
        ck_assert_msg(strstr(log, why[i]) != NULL, "want \"%s\" in:\n%s",
                      why[i], log);
    /* File and line named. */
    ck_assert_msg(strstr(log, "bad.xml:6: alarm ns=2;s=NoInput") != NULL,
                  "%s", log);
    /* The refused stay as the file has them, with nothing added. */
    ck_assert_uint_ne(lookup_str(2, "NoInput"), SHM_NONE);
    ck_assert_uint_eq(lookup_str(2, "NoInput.ActiveState"), SHM_NONE);
    ck_assert_uint_eq(node(lookup_str(2, "ObjState.A"))->node_class,
                      SHM_NC_OBJECT);
    ck_assert_uint_ne(lookup_str(2, "Good.ActiveState.Id"), SHM_NONE);
}
END_TEST

START_TEST(test_max_alarms)
{
    const char *f = put("two.xml", HEAD("<Uri>" URI_A "</Uri>") TANK
        OBJ("ns=1;i=6001", "1:Second", "ns=1;s=Tank", "i=9482")
        PROP("ns=1;i=6002", "InputNode", "ns=1;i=6001", "i=17",
             NID("ns=1;s=Tank.Level"))
        PROP("ns=1;i=6003", "HighLimit", "ns=1;i=6001", "i=11", DBL("80"))
        TAIL);

    conf.alarms_max = 1;
    build_ok(f);
    ck_assert_uint_eq(as.alarms.n, 1);
    ck_assert_uint_eq(as.alarms_refused, 1);
    ck_assert_msg(strstr(as.alarms_refused_last, "ns=2;i=6001") != NULL
                      && strstr(as.alarms_refused_last,
                                "alarms.max_alarms") != NULL,
                  "%s", as.alarms_refused_last);
}
END_TEST

/* The file's own Acknowledge method node under the tank's alarm. */
#define OWN_ACK                                                             \
    "<UAMethod NodeId=\"ns=1;i=5009\" BrowseName=\"Acknowledge\">"        \
    "<References><Reference ReferenceType=\"i=47\" IsForward=\"false\">"  \
    "ns=1;i=5001</Reference></References></UAMethod>\n"

/* bk_alarmnode_call as the broker's call handler gives it a record: the
 * method node on object, as an operator, with (EventId, Comment). */
static ua_status
call_ack(uint32_t object, uint32_t method, const uint8_t id[16])
{
    static uint8_t          args[512];
    struct shm_fo_call      r;
    struct ua_variant       v;
    struct ua_string        eid = { 16, (uint8_t *)(uintptr_t)id };
    struct ua_localizedtext lt;
    size_t                  n1 = 0, n2 = 0;
    ua_status               st = UA_BAD_INTERNAL_ERROR;

    memset(&lt, 0, sizeof(lt));
    lt.mask = UA_LT_TEXT;
    lt.locale.len = -1;
    lt.text = ua_string_from("seen");
    ua_variant_set_scalar(&v, &eid, UA_BT_BYTESTRING);
    ck_assert_int_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], args,
                               sizeof(args), &n1), UA_GOOD);
    ua_variant_set_scalar(&v, &lt, UA_BT_LOCALIZEDTEXT);
    ck_assert_int_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], args + n1,
                               sizeof(args) - n1, &n2), UA_GOOD);
    memset(&r, 0, sizeof(r));
    r.object = object;
    r.method = method;
    r.nargs = 2;
    r.args_len = (uint32_t)(n1 + n2);
    r.role = SHM_FO_ROLE_OPERATOR;
    ck_assert(bk_alarmnode_call(&as.alarms, &r, args, "op", 2, "", 0, T0,
                                &st));
    return st;
}

START_TEST(test_own_method)
{
    const char *f = put("own.xml", HEAD("<Uri>" URI_A "</Uri>") TANK OWN_ACK
                        TAIL);
    uint32_t    cond, own, ack;
    struct ua_variant v;
    uint8_t     id[16];

    build_ok(f);
    cond = lookup_num(2, 5001);
    own = lookup_num(2, 5009);
    ack = lookup_num(0, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE);
    /* The file's Acknowledge: namespace 0's is not added beside it. */
    ck_assert_int_eq(has_ref(cond, lookup_num(0, UA_NS0ID_HASCOMPONENT),
                             ack), 0);
    ck_assert_int_eq(has_ref(cond, lookup_num(0, UA_NS0ID_HASCOMPONENT),
                             lookup_num(0, UA_NS0ID_CONDITIONTYPE_ENABLE)),
                     1);
    set(lookup_str(2, "Tank.Level"), 85);
    value_of(lookup_str(2, "5001.EventId"), &v);
    memcpy(id, ((struct ua_string *)v.data)->data, 16);
    /* Called through the instance's own node: Acknowledge; again
     * BadConditionBranchAlreadyAcked; namespace 0's node the same. */
    ck_assert_uint_eq(call_ack(cond, own, id), UA_GOOD);
    ck_assert_int_eq(num_of(lookup_str(2, "5001.AckedState.Id")), 1);
    value_of(lookup_str(2, "5001.EventId"), &v);
    memcpy(id, ((struct ua_string *)v.data)->data, 16);
    ck_assert_uint_eq(call_ack(cond, own, id),
                      UA_BAD_CONDITION_BRANCH_ALREADY_ACKED);
    ck_assert_uint_eq(call_ack(cond, ack, id),
                      UA_BAD_CONDITION_BRANCH_ALREADY_ACKED);
}
END_TEST

START_TEST(test_state_by_nodeid)
{
    const char *f = tank_file();
    char        path[128];
    uint32_t    level;

    /* Active and unacknowledged, saved under its NodeId... */
    build_ok(f);
    set(lookup_str(2, "Tank.Level"), 85);
    snprintf(path, sizeof(path), "%s/alarms.state", dir);
    ck_assert_int_eq(bk_alarmstate_save(&as.alarms, path, err, sizeof(err)),
                     0);
    bk_addrspace_close(&as);
    built = false;
    {
        FILE *sf = fopen(path, "r");
        char  text[4096];

        ck_assert_ptr_nonnull(sf);
        text[fread(text, 1, sizeof(text) - 1, sf)] = '\0';
        fclose(sf);
        ck_assert_msg(strstr(text, "\nns=2;i=5001 ") != NULL, "%s", text);
    }
    /* ...and restored after a restart (the input is 50 again). */
    build_ok(f);
    level = lookup_str(2, "Tank.Level");
    ck_assert_int_eq(num_of(level), 50);
    ck_assert_int_eq(bk_alarmstate_load(&as.alarms, path, T0, err,
                                        sizeof(err)), 1);
    ck_assert_int_eq(num_of(lookup_num(2, 5007)), 1);
    ck_assert_int_eq(num_of(lookup_str(2, "5001.AckedState.Id")), 0);
    ck_assert(text_is(lookup_str(2, "5001.LimitState.CurrentState"),
                      "High"));
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("alarmnset");
    SRunner *sr;
    int      failed;
    const struct {
        const char  *name;
        const TTest *t;
    } cases[] = {
        { "ExclusiveLevelAlarmType", test_exclusive_level },
        { "Types and sources", test_types_and_sources },
        { "Refused instances", test_refused },
        { "alarms.max_alarms", test_max_alarms },
        { "State by NodeId", test_state_by_nodeid },
        { "The instance's own method", test_own_method },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TCase *tc = tcase_create(cases[i].name);

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
