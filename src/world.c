/* world.c: placeholder until the ECS core lands (replaced by the ECS core work). */
#include "weft/base.h"
