/*
 * proto/attrs.c: the attributes of each NodeClass (attrs.h).
 *
 * Read off Part 3 §5: the Base NodeClass (§5.2) gives every class NodeId,
 * NodeClass, BrowseName, DisplayName, Description, WriteMask,
 * UserWriteMask, RolePermissions, UserRolePermissions and
 * AccessRestrictions; each class adds its own below.  A constant table:
 * safe from any thread.
 */
#include "attrs.h"

#include "types_gen.h"

#define NC_OBJ  UA_NODECLASS_OBJECT
#define NC_VAR  UA_NODECLASS_VARIABLE
#define NC_MET  UA_NODECLASS_METHOD
#define NC_OT   UA_NODECLASS_OBJECTTYPE
#define NC_VT   UA_NODECLASS_VARIABLETYPE
#define NC_RT   UA_NODECLASS_REFERENCETYPE
#define NC_DT   UA_NODECLASS_DATATYPE
#define NC_VIEW UA_NODECLASS_VIEW
#define NC_ALL  UA_ATTRS_ALL_CLASSES

_Static_assert((NC_OBJ | NC_VAR | NC_MET | NC_OT | NC_VT | NC_RT | NC_DT
                | NC_VIEW) == NC_ALL, "eight NodeClass bits");

const uint8_t ua_attrs_classes[UA_ATTR_MAX + 1] = {
    [UA_ATTR_NODEID] = NC_ALL,
    [UA_ATTR_NODECLASS] = NC_ALL,
    [UA_ATTR_BROWSENAME] = NC_ALL,
    [UA_ATTR_DISPLAYNAME] = NC_ALL,
    [UA_ATTR_DESCRIPTION] = NC_ALL,
    [UA_ATTR_WRITEMASK] = NC_ALL,
    [UA_ATTR_USERWRITEMASK] = NC_ALL,
    [UA_ATTR_ISABSTRACT] = NC_OT | NC_VT | NC_RT | NC_DT,
    [UA_ATTR_SYMMETRIC] = NC_RT,                /* §5.3 */
    [UA_ATTR_INVERSENAME] = NC_RT,
    [UA_ATTR_CONTAINSNOLOOPS] = NC_VIEW,        /* §5.4 */
    [UA_ATTR_EVENTNOTIFIER] = NC_OBJ | NC_VIEW, /* §5.5, §5.4 */
    [UA_ATTR_VALUE] = NC_VAR | NC_VT,           /* §5.6 */
    [UA_ATTR_DATATYPE] = NC_VAR | NC_VT,
    [UA_ATTR_VALUERANK] = NC_VAR | NC_VT,
    [UA_ATTR_ARRAYDIMENSIONS] = NC_VAR | NC_VT,
    [UA_ATTR_ACCESSLEVEL] = NC_VAR,
    [UA_ATTR_USERACCESSLEVEL] = NC_VAR,
    [UA_ATTR_MINIMUMSAMPLINGINTERVAL] = NC_VAR,
    [UA_ATTR_HISTORIZING] = NC_VAR,
    [UA_ATTR_EXECUTABLE] = NC_MET,              /* §5.7 */
    [UA_ATTR_USEREXECUTABLE] = NC_MET,
    [UA_ATTR_DATATYPEDEFINITION] = NC_DT,       /* §5.8 */
    [UA_ATTR_ROLEPERMISSIONS] = NC_ALL,         /* §5.2 */
    [UA_ATTR_USERROLEPERMISSIONS] = NC_ALL,
    [UA_ATTR_ACCESSRESTRICTIONS] = NC_ALL,
    [UA_ATTR_ACCESSLEVELEX] = NC_VAR,
};
