/* weft.h: the umbrella header; includes every module header and nothing else. */
#ifndef WEFT_H
#define WEFT_H
#include "weft/archive.h"
#include "weft/base.h"
#include "weft/command.h"
#include "weft/component.h"
#include "weft/entity.h"
#include "weft/group.h"
#include "weft/hierarchy.h"
#include "weft/jobs.h"
#include "weft/math.h"
#include "weft/module.h"
#include "weft/observer.h"
#include "weft/query.h"
#include "weft/resource.h"
#include "weft/snapshot.h"
#include "weft/system.h"
#include "weft/trace.h"
#include "weft/world.h"
/* ECS headers are added here as their modules land. */
#endif /* WEFT_H */
