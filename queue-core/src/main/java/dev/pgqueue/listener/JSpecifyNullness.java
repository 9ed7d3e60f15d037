package dev.pgqueue.listener;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Member;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.TypeVariable;

import org.jspecify.annotations.NonNull;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.NullUnmarked;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.introspect.AnnotatedField;
import tools.jackson.databind.introspect.AnnotatedMember;
import tools.jackson.databind.introspect.AnnotatedMethod;
import tools.jackson.databind.introspect.AnnotatedParameter;

/**
 * Whether JSpecify says that a property Jackson sets is never null, which makes a payload that lacks
 * it (or gives it as null) one the listener cannot take.
 *
 * <p>A property is never null when the member Jackson sets it through says so:
 * <ul>
 * <li>its type is annotated {@link NonNull @NonNull} (a record component, a creator parameter, a field,
 * a setter's parameter); or</li>
 * <li>it is a record component or another creator parameter, declared in a {@link NullMarked @NullMarked}
 * scope (the constructor or factory, its class, an enclosing class, the package or the module, the
 * nearest of {@code @NullMarked} and {@link NullUnmarked @NullUnmarked} deciding), and its type is not
 * annotated {@link Nullable @Nullable}.</li>
 * </ul>
 * A creator parameter has no other value than the payload's, so in a {@code @NullMarked} scope it
 * promises one; a field or setter keeps the value the object was built with, so only an explicit
 * {@code @NonNull} promises one there. Primitives cannot be null (Jackson gives an absent one 0 or
 * false), {@code Optional} and other reference types read an absence as empty, and a type variable's
 * nullness is its caller's: none of them is ever required by nullness.
 */
final class JSpecifyNullness {

	private JSpecifyNullness() {
	}

	/**
	 * Whether the property of type {@code type} that Jackson sets through {@code member} is declared
	 * never null.
	 */
	static boolean isNonNull(@Nullable AnnotatedMember member, JavaType type) {
		if (member == null || type.isPrimitive() || type.isReferenceType()) {
			return false;
		}
		if (member instanceof AnnotatedParameter parameter) {
			return isNonNullCreatorParameter(parameter);
		}
		if (member instanceof AnnotatedField field) {
			return isAnnotatedNonNull(field.getAnnotated().getAnnotatedType());
		}
		if (member instanceof AnnotatedMethod setter && setter.getParameterCount() == 1) {
			AnnotatedType[] parameters = setter.getAnnotated().getAnnotatedParameterTypes();
			return parameters.length == 1 && isAnnotatedNonNull(parameters[0]);
		}
		return false;
	}

	private static boolean isNonNullCreatorParameter(AnnotatedParameter parameter) {
		Member owner = parameter.getOwner().getMember();
		if (!(owner instanceof Executable executable)) {
			return false;
		}
		int index = parameter.getIndex();
		AnnotatedType[] types = executable.getAnnotatedParameterTypes();
		// Constructors of inner classes may report fewer annotated types than parameters: trust the index
		// only when the two agree.
		AnnotatedType declared = (types.length == executable.getParameterCount() && index < types.length)
				? types[index] : null;
		RecordComponent component = canonicalComponent(executable, index);
		AnnotatedType componentType = (component != null) ? component.getAnnotatedType() : null;
		if (isAnnotated(declared, Nullable.class) || isAnnotated(componentType, Nullable.class)) {
			return false;
		}
		if (isAnnotated(declared, NonNull.class) || isAnnotated(componentType, NonNull.class)) {
			return true;
		}
		AnnotatedType type = (declared != null) ? declared : componentType;
		return type != null && !(type.getType() instanceof TypeVariable) && isNullMarked(executable);
	}

	private static boolean isAnnotatedNonNull(AnnotatedType type) {
		return isAnnotated(type, NonNull.class) && !isAnnotated(type, Nullable.class);
	}

	private static boolean isAnnotated(@Nullable AnnotatedType type, Class<? extends Annotation> annotation) {
		return type != null && type.isAnnotationPresent(annotation);
	}

	/** The record component that a parameter of a record's canonical constructor sets, if it is one. */
	private static @Nullable RecordComponent canonicalComponent(Executable executable, int index) {
		Class<?> owner = executable.getDeclaringClass();
		if (!(executable instanceof Constructor<?>) || !owner.isRecord()) {
			return null;
		}
		RecordComponent[] components = owner.getRecordComponents();
		Class<?>[] parameters = executable.getParameterTypes();
		if (components.length != parameters.length || index >= components.length) {
			return null;
		}
		for (int i = 0; i < components.length; i++) {
			if (components[i].getType() != parameters[i]) {
				return null;
			}
		}
		return components[index];
	}

	/** Whether the nearest scope around the creator that says so is {@code @NullMarked}. */
	private static boolean isNullMarked(Executable executable) {
		Boolean marked = marking(executable);
		for (Class<?> type = executable.getDeclaringClass(); marked == null && type != null;
				type = type.getEnclosingClass()) {
			marked = marking(type);
		}
		Class<?> declaring = executable.getDeclaringClass();
		if (marked == null && declaring.getPackage() != null) {
			marked = marking(declaring.getPackage());
		}
		if (marked == null && declaring.getModule().isNamed()) {
			marked = marking(declaring.getModule());
		}
		return Boolean.TRUE.equals(marked);
	}

	private static @Nullable Boolean marking(AnnotatedElement element) {
		if (element.isAnnotationPresent(NullUnmarked.class)) {
			return false;
		}
		return element.isAnnotationPresent(NullMarked.class) ? Boolean.TRUE : null;
	}

}
