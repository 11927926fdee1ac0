;; Approximate dot products of one query against many int8-quantized vectors.
;; Rows are `dims` signed bytes, `dims` a multiple of 64 (rows are padded with
;; zeros); the query is `dims` signed 16-bit values. Each result is the
;; integer dot product, which the caller multiplies by the two quantization
;; scales. Four 16-byte loads per step keep several memory reads in flight:
;; the scan is bound by memory bandwidth, not arithmetic.
(module
  (memory (export "memory") 1)
  (func (export "scores")
    (param $vectors i32) (param $query i32) (param $dims i32) (param $count i32) (param $out i32)
    (local $row i32) (local $end i32) (local $d i32) (local $q i32)
    (local $a v128) (local $b v128) (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local.set $row (local.get $vectors))
    (local.set $end (i32.add (local.get $vectors) (i32.mul (local.get $dims) (local.get $count))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $row) (local.get $end)))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (local.set $q (local.get $query))
        (block $cols_done
          (loop $cols
            (br_if $cols_done (i32.ge_u (local.get $d) (local.get $dims)))
            (local.set $v0 (v128.load (i32.add (local.get $row) (local.get $d))))
            (local.set $v1 (v128.load offset=16 (i32.add (local.get $row) (local.get $d))))
            (local.set $v2 (v128.load offset=32 (i32.add (local.get $row) (local.get $d))))
            (local.set $v3 (v128.load offset=48 (i32.add (local.get $row) (local.get $d))))
            (local.set $a (i32x4.add (local.get $a) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v0)) (v128.load (local.get $q)))))
            (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v0)) (v128.load offset=16 (local.get $q)))))
            (local.set $a (i32x4.add (local.get $a) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v1)) (v128.load offset=32 (local.get $q)))))
            (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v1)) (v128.load offset=48 (local.get $q)))))
            (local.set $a (i32x4.add (local.get $a) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v2)) (v128.load offset=64 (local.get $q)))))
            (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v2)) (v128.load offset=80 (local.get $q)))))
            (local.set $a (i32x4.add (local.get $a) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v3)) (v128.load offset=96 (local.get $q)))))
            (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v3)) (v128.load offset=112 (local.get $q)))))
            (local.set $d (i32.add (local.get $d) (i32.const 64)))
            (local.set $q (i32.add (local.get $q) (i32.const 128)))
            (br $cols)))
        (local.set $a (i32x4.add (local.get $a) (local.get $b)))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
            (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $row (i32.add (local.get $row) (local.get $dims)))
        (br $rows)))))
