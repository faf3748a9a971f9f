/* test_math.c: the math module (weft/math.h) — compose, multiply, inverse, decompose and
 * the quaternion helpers, against hand-worked values and round trips. The 1,000-case loops
 * check with plain C and assert once, naming the first failing case and the seed (the suites
 * run with --full-stats, which prints every passing assertion). */
#include <criterion/criterion.h>
#include <math.h>

#include "hier_ref.h"
#include "weft/math.h"

TestSuite(math, .timeout = 10);

static bool near(float a, float b, float eps) { return fabsf(a - b) <= eps; }

Test(math, compose_places_translation_in_the_last_column_and_scales_columns) {
    const weft_mat4_t m =
        weft_mat4_compose(weft_vec3_make(1, 2, 3), weft_quat_identity(), weft_vec3_make(2, 3, 4));
    const float want[16] = {2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0, 1, 2, 3, 1};
    cr_assert(memcmp(m.m, want, sizeof(want)) == 0);
}

Test(math, quarter_turn_about_z_maps_x_to_y) {
    const weft_quat_t q =
        weft_quat_from_axis_angle(weft_vec3_make(0, 0, 1), 3.14159265358979f / 2.0f);
    const weft_vec3_t v = weft_quat_rotate(q, weft_vec3_make(1, 0, 0));
    cr_assert(near(v.x, 0, 1e-6f) && near(v.y, 1, 1e-6f) && near(v.z, 0, 1e-6f));
    const weft_mat4_t m = weft_mat4_compose(weft_vec3_make(0, 0, 0), q, weft_vec3_make(1, 1, 1));
    const weft_vec3_t p = weft_mat4_transform_point(&m, weft_vec3_make(1, 0, 0));
    cr_assert(near(p.x, 0, 1e-6f) && near(p.y, 1, 1e-6f) && near(p.z, 0, 1e-6f));
}

Test(math, multiply_applies_the_right_matrix_first) {
    const weft_mat4_t t =
        weft_mat4_compose(weft_vec3_make(10, 0, 0), weft_quat_identity(), weft_vec3_make(1, 1, 1));
    const weft_mat4_t s =
        weft_mat4_compose(weft_vec3_make(0, 0, 0), weft_quat_identity(), weft_vec3_make(2, 2, 2));
    const weft_mat4_t ts = weft_mat4_mul(&t, &s); /* scale, then translate */
    const weft_vec3_t p = weft_mat4_transform_point(&ts, weft_vec3_make(1, 1, 1));
    cr_assert(p.x == 12.0f && p.y == 2.0f && p.z == 2.0f);
}

Test(math, inverse_times_matrix_is_the_identity) {
    hr_fail_t fail;
    hr_rng_t r = hr_seeded(&fail, "inverse");
    for (int i = 0; i < 1000 && !fail.failed; i++) {
        fail.step = i;
        const weft_transform_t t = hr_transform(&r);
        const weft_mat4_t m = weft_transform_matrix(&t);
        weft_mat4_t inv;
        if (!hr_check(&fail, weft_mat4_inverse(&m, &inv), "case %d: no inverse", i)) {
            break;
        }
        const weft_mat4_t id = weft_mat4_mul(&inv, &m);
        const weft_mat4_t want = weft_mat4_identity();
        hr_check(&fail, hr_mat_near(&id, &want, 1e-5f), "case %d: inverse * m is not the identity",
                 i);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

Test(math, singular_matrix_has_no_inverse_and_output_is_untouched) {
    weft_mat4_t m = weft_mat4_identity();
    m.m[5] = 0.0f;
    weft_mat4_t out = weft_mat4_identity();
    out.m[1] = 42.0f;
    cr_assert(!weft_mat4_inverse(&m, &out));
    cr_assert(out.m[1] == 42.0f);
}

Test(math, decompose_round_trips_translation_rotation_scale) {
    hr_fail_t fail;
    hr_rng_t r = hr_seeded(&fail, "decompose");
    for (int i = 0; i < 1000 && !fail.failed; i++) {
        fail.step = i;
        weft_transform_t t = hr_transform(&r);
        t.scale =
            weft_vec3_make(hr_float(&r, 0.2f, 3), hr_float(&r, 0.2f, 3), hr_float(&r, 0.2f, 3));
        const weft_mat4_t m = weft_transform_matrix(&t);
        const weft_transform_t back = weft_transform_from_matrix(&m);
        const weft_mat4_t m2 = weft_transform_matrix(&back);
        hr_check(&fail, hr_mat_near(&m, &m2, 1e-4f), "case %d: the matrix does not round-trip", i);
        hr_check(&fail,
                 near(back.scale.x, t.scale.x, 1e-4f) && near(back.scale.y, t.scale.y, 1e-4f) &&
                     near(back.scale.z, t.scale.z, 1e-4f),
                 "case %d: the scale does not round-trip", i);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

Test(math, decompose_carries_a_mirror_in_negative_x_scale) {
    const weft_mat4_t m =
        weft_mat4_compose(weft_vec3_make(1, 2, 3), weft_quat_identity(), weft_vec3_make(1, -2, 1));
    const weft_transform_t back = weft_transform_from_matrix(&m);
    cr_assert(back.scale.x < 0.0f);
    const weft_mat4_t m2 = weft_transform_matrix(&back);
    cr_assert(hr_mat_near(&m, &m2, 1e-5f));
}

Test(math, quaternion_product_composes_rotations) {
    const weft_quat_t a = weft_quat_from_axis_angle(weft_vec3_make(0, 1, 0), 0.7f);
    const weft_quat_t b = weft_quat_from_axis_angle(weft_vec3_make(1, 0, 0), -1.1f);
    const weft_vec3_t v = weft_vec3_make(0.3f, -2.0f, 5.0f);
    const weft_vec3_t one = weft_quat_rotate(weft_quat_mul(a, b), v);
    const weft_vec3_t two = weft_quat_rotate(a, weft_quat_rotate(b, v));
    cr_assert(near(one.x, two.x, 1e-5f) && near(one.y, two.y, 1e-5f) && near(one.z, two.z, 1e-5f));
    const weft_quat_t z = weft_quat_normalize((weft_quat_t){0, 0, 0, 0});
    cr_assert(z.w == 1.0f && z.x == 0.0f);
}

Test(math, same_inputs_give_the_same_bits_every_time) {
    hr_rng_t r = {hr_seed("determinism")};
    const weft_transform_t t = hr_transform(&r);
    const weft_transform_t u = hr_transform(&r);
    const weft_mat4_t a = weft_transform_matrix(&t);
    const weft_mat4_t b = weft_transform_matrix(&u);
    const weft_mat4_t ab1 = weft_mat4_mul(&a, &b);
    const weft_mat4_t ab2 = weft_mat4_mul(&a, &b);
    cr_assert(hr_mat_eq(&ab1, &ab2));
    cr_assert(weft_vec3_length(weft_vec3_cross(weft_vec3_make(1, 0, 0), weft_vec3_make(0, 1, 0))) ==
              1.0f);
    cr_assert(weft_vec3_dot(
                  weft_vec3_sub(weft_vec3_make(3, 3, 3), weft_vec3_make(1, 2, 3)),
                  weft_vec3_scale(weft_vec3_add(weft_vec3_make(1, 0, 0), weft_vec3_make(0, 1, 0)),
                                  2.0f)) == 6.0f);
}
